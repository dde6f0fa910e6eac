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
        title = try Self.parse(titleSource, part: "title", firstLine: 1)
        body = try Self.parse(bodySource, part: "body", firstLine: parts[0].split(separator: "\n", omittingEmptySubsequences: false).count + 2)
        self.event = event
        self.source = source
        try validate()
    }

    /// Parses one part; a parse error names the line of the template file and the problem.
    private static func parse(_ text: String, part: String, firstLine: Int) throws -> MustacheTemplate {
        do {
            return try MustacheTemplate(string: textMode + text)
        } catch let error as MustacheTemplate.ParserError {
            let line = firstLine + error.context.lineNumber - 1
            throw InputError("the template does not parse: line \(line) (the \(part)): \(problem(error.error))")
        } catch {
            throw InputError("the template does not parse: \(error)")
        }
    }

    private static func problem(_ error: any Error) -> String {
        switch error as? MustacheTemplate.Error {
        case .sectionCloseNameIncorrect: "a section is closed with another name than it was opened with"
        case .unfinishedName: "a tag is not closed with }}"
        case .expectedSectionEnd: "a section is opened and never closed"
        case .invalidSetDelimiter: "a delimiter change is malformed"
        case .invalidConfigVariableSyntax, .unrecognisedConfigVariable: "a {{% }} setting is not understood"
        case .transformAppliedToInheritanceSection, .illegalTokenInsideInheritSection, .textInsideInheritSection:
            "template inheritance is not supported"
        case nil: "\(error)"
        }
    }

    /// Renders against sample data for every priority, with and without the optional parts
    /// (reason, group name), so each branch runs, recording the names the template looks up.
    /// Every rendering must give a title and a body: a push with an empty one is never sent.
    /// (The member and the manager app get the same words, so there is nothing to vary there.)
    private func validate() throws {
        let samples = event.variables == TemplateVariables.emailNames ? TemplateVariables.emailSamples() : TemplateVariables.samples()
        for (sample, values) in samples {
            let recorder = LookupRecorder(values: values)
            let rendered = RenderedMessage(title: title.render(recorder), body: body.render(recorder))
            let unknown = recorder.names.subtracting(event.variables).sorted()
            if let first = unknown.first {
                let known = event.variables.sorted().joined(separator: ", ")
                throw InputError("unknown variable {{\(first)}} in the \(event.rawValue) template; known: \(known)")
            }
            if rendered.title.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                throw InputError("the title renders empty for \(sample)")
            }
            if rendered.body.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                throw InputError("the body renders empty for \(sample)")
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

    /// Renders an email's subject and text part (`email`), or its title and HTML (`email.html`,
    /// with every value HTML-escaped).
    public func render(_ email: TemplateVariables.Email) -> RenderedMessage {
        render(TemplateVariables.values(email, html: event == .emailHTML))
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
