import Foundation
import HeraldCore

/// The templates of one tenant, resolved: its overrides over the defaults, looked up with
/// the locale fallbacks (`pt-BR`, `pt`, `en`). A value: rendering with it never waits.
public struct TenantTemplates: Sendable {
    let defaults: DefaultTemplates
    let overrides: [TemplateKey: MessageTemplate]

    /// The template to use, the locale it was found under, and whether it is an override.
    public func resolve(_ event: TemplateEvent, locale: String) throws -> TemplateCatalog.Resolved {
        for candidate in TemplateCatalog.fallbacks(for: locale) {
            let key = TemplateKey(event: event, locale: candidate)
            if let template = overrides[key] { return TemplateCatalog.Resolved(template: template, locale: candidate, isOverride: true) }
            if let template = defaults.templates[key] { return TemplateCatalog.Resolved(template: template, locale: candidate, isOverride: false) }
        }
        throw InputError("no template for \(event.rawValue)")
    }

    /// The template to use.
    public func template(for event: TemplateEvent, locale: String) throws -> MessageTemplate {
        try resolve(event, locale: locale).template
    }
}
