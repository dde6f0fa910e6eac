import Foundation
import HeraldCore
import Mustache

/// One event's title and body templates, parsed once and rendered many times.
///
/// The source is the title, a line holding only `---`, then the body. Rendering never
/// escapes HTML: names and text are plain text.
public struct MessageTemplate: Sendable {
    public let event: TemplateEvent
    /// The text it was parsed from, as stored.
    public let source: String
    let title: MustacheTemplate
    let body: MustacheTemplate

    /// Longest template source accepted.
    public static let maxSourceBytes = 4096
    static let separator = "\n---\n"
    /// Turns HTML escaping off for everything that follows.
    static let textMode = "{{%CONTENT_TYPE:TEXT}}"

    /// Parses and checks a template: it parses, it renders against sample data, and it uses
    /// only the variables `event` provides.
    /// - Throws: `InputError` saying what is wrong (naming an unknown variable).
    public init(event: TemplateEvent, source: String) throws {
        guard source.utf8.count <= Self.maxSourceBytes else {
            throw InputError("the template is \(source.utf8.count) bytes; the limit is \(Self.maxSourceBytes)")
        }
        let normalised = source.replacingOccurrences(of: "\r\n", with: "\n")
        let parts = normalised.components(separatedBy: Self.separator)
        guard parts.count == 2 else {
            throw InputError("a template is the title, a line holding only ---, then the body")
        }
        let titleSource = parts[0].trimmingCharacters(in: .newlines)
        let bodySource = parts[1].trimmingCharacters(in: .newlines)
        if normalised.contains("{{>") || normalised.contains("{{<") || normalised.contains("{{$") {
            throw InputError("template partials, parents and blocks are not supported")
        }
        do {
            title = try MustacheTemplate(string: Self.textMode + titleSource)
            body = try MustacheTemplate(string: Self.textMode + bodySource)
        } catch {
            throw InputError("the template does not parse: \(error)")
        }
        self.event = event
        self.source = source
        try validate()
    }

    /// Renders against sample data twice (every flag on, then off) so each branch runs,
    /// recording the names the template looks up.
    private func validate() throws {
        for flag in [true, false] {
            let recorder = LookupRecorder(values: TemplateVariables.sample(flag: flag))
            let rendered = RenderedMessage(title: title.render(recorder), body: body.render(recorder))
            let unknown = recorder.names.subtracting(event.variables).sorted()
            if let first = unknown.first {
                let known = event.variables.sorted().joined(separator: ", ")
                throw InputError("unknown variable {{\(first)}} in the \(event.rawValue) template; known: \(known)")
            }
            if flag, rendered.title.trimmingCharacters(in: .whitespaces).isEmpty {
                throw InputError("the title renders empty for the sample data")
            }
            if flag, rendered.body.trimmingCharacters(in: .whitespaces).isEmpty {
                throw InputError("the body renders empty for the sample data")
            }
        }
    }

    func render(_ values: [String: Any]) -> RenderedMessage {
        RenderedMessage(title: title.render(values), body: body.render(values))
    }

    /// Renders an activity event for one recipient.
    public func render(_ activity: TemplateVariables.Activity, for recipient: TemplateVariables.Recipient) -> RenderedMessage {
        render(TemplateVariables.values(activity, for: recipient))
    }

    /// Renders a chat message (its text cut to the 100-character preview).
    public func render(_ chat: TemplateVariables.Chat) -> RenderedMessage {
        render(TemplateVariables.values(chat))
    }
}

/// A template's view of the variables that writes down every name it asks for.
/// Used on one thread, for one render.
private final class LookupRecorder: MustacheParent {
    private let values: [String: Any]
    private(set) var names: Set<String> = []

    init(values: [String: Any]) {
        self.values = values
    }

    func child(named name: String) -> Any? {
        names.insert(name)
        return values[name]
    }
}
