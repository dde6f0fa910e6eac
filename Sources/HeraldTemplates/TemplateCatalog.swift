import Foundation
import HeraldCore

/// Where tenant overrides come from (the database, in Herald).
public protocol TemplateOverrideSource: Sendable {
    /// Every override a tenant saved: (event, locale) → source.
    func overrides(tenant: UUID) async throws -> [TemplateKey: String]
}

/// An event's template in one locale.
public struct TemplateKey: Sendable, Hashable {
    public let event: TemplateEvent
    public let locale: String

    public init(event: TemplateEvent, locale: String) {
        self.event = event
        self.locale = locale
    }
}

/// The default templates shipped in `templates/`, parsed once.
public struct DefaultTemplates: Sendable {
    public let templates: [TemplateKey: MessageTemplate]

    /// The templates compiled into the binary.
    public static let bundled: DefaultTemplates = {
        do {
            return try DefaultTemplates(files: EmbeddedFiles.templates)
        } catch {
            // The build embeds templates/ and the tests check every file: a broken default
            // is a build defect, not something input can cause.
            preconditionFailure("a default template is broken: \(error)")
        }
    }()

    /// Parses `<locale>/<event>.mustache` files.
    public init(files: [String: String]) throws {
        var templates: [TemplateKey: MessageTemplate] = [:]
        for (path, source) in files where path.hasSuffix(".mustache") {
            let parts = path.split(separator: "/")
            guard parts.count == 2, let event = TemplateEvent(rawValue: String(parts[1].dropLast(".mustache".count))) else {
                throw InputError("template file \(path) is not <locale>/<event>.mustache")
            }
            let key = TemplateKey(event: event, locale: String(parts[0]))
            do {
                templates[key] = try MessageTemplate(event: event, source: source)
            } catch let error as InputError {
                throw InputError("\(path): \(error.description)")
            }
        }
        self.templates = templates
    }

    /// Locales with at least one default template.
    public var locales: [String] { Set(templates.keys.map(\.locale)).sorted() }
}

/// Finds the template for an event, locale and tenant: the tenant's override if any, else
/// the default, trying `pt-BR`, then `pt`, then `en`.
///
/// Overrides are read through `source` and cached per tenant for `refreshInterval`
/// (5 seconds by default), so a saved override reaches running workers within that time.
public actor TemplateCatalog {
    public let defaults: DefaultTemplates
    private let source: (any TemplateOverrideSource)?
    private let refreshInterval: TimeInterval
    private let now: @Sendable () -> Date
    private var cache: [UUID: (fetched: Date, templates: [TemplateKey: MessageTemplate])] = [:]

    /// - Parameter now: the clock, injected so expiry can be tested.
    public init(
        defaults: DefaultTemplates = .bundled, overrides source: (any TemplateOverrideSource)? = nil,
        refreshInterval: Duration = .seconds(5), now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.defaults = defaults
        self.source = source
        self.refreshInterval = refreshInterval.timeInterval
        self.now = now
    }

    /// The template to use.
    public func template(for event: TemplateEvent, locale: String, tenant: UUID?) async throws -> MessageTemplate {
        try await resolve(event, locale: locale, tenant: tenant).template
    }

    /// A template and where it came from.
    public struct Resolved: Sendable {
        public let template: MessageTemplate
        /// The locale it was found under, after falling back.
        public let locale: String
        /// The tenant's override rather than the default.
        public let isOverride: Bool
    }

    /// The template to use, the locale it was found under, and whether it is an override.
    public func resolve(_ event: TemplateEvent, locale: String, tenant: UUID?) async throws -> Resolved {
        try TenantTemplates(defaults: defaults, overrides: try await overrides(for: tenant)).resolve(event, locale: locale)
    }

    /// Every template a tenant's pushes may use, resolved now, to render with no waiting:
    /// its overrides as cached, or read with `load` when the cache is stale (fan-out reads
    /// them in its own transaction, rather than open a second one beside it).
    public func templates(
        for tenant: UUID, loading load: (UUID) async throws -> [TemplateKey: String]
    ) async throws -> TenantTemplates {
        TenantTemplates(defaults: defaults, overrides: try await overrides(for: tenant, loading: load))
    }

    /// `pt-BR` → `pt-BR`, `pt`, `en`.
    public static func fallbacks(for locale: String) -> [String] {
        var chain = [locale]
        if let language = locale.split(separator: "-").first.map(String.init), language != locale { chain.append(language) }
        if !chain.contains("en") { chain.append("en") }
        return chain
    }

    /// Forgets a tenant's cached overrides (after saving one in this process).
    public func invalidate(tenant: UUID) {
        cache[tenant] = nil
    }

    private func overrides(for tenant: UUID?) async throws -> [TemplateKey: MessageTemplate] {
        guard let tenant, let source else { return [:] }
        return try await overrides(for: tenant) { try await source.overrides(tenant: $0) }
    }

    private func overrides(for tenant: UUID, loading load: (UUID) async throws -> [TemplateKey: String]) async throws -> [TemplateKey:
        MessageTemplate]
    {
        if let cached = cache[tenant], now().timeIntervalSince(cached.fetched) < refreshInterval {
            return cached.templates
        }
        guard source != nil else { return [:] }
        var parsed: [TemplateKey: MessageTemplate] = [:]
        for (key, text) in try await load(tenant) {
            // Overrides were validated when saved; one that no longer parses is skipped so
            // the default still reaches the phone.
            parsed[key] = try? MessageTemplate(event: key.event, source: text)
        }
        cache[tenant] = (now(), parsed)
        return parsed
    }
}
