import Foundation

/// How a person wants one kind of event pushed (docs/notifications.md): at once, gathered into
/// their digest, or not at all.
public enum PushMode: String, Sendable, CaseIterable, Codable {
    /// Pushed as it happens (the default).
    case immediate
    /// Gathered into the person's digest, pushed once when its window ends.
    case digest
    /// Not pushed.
    case off

    /// `on` and `off` as the first preferences said them, and the three names.
    /// - Throws: `InputError` naming what is allowed.
    public static func parse(_ text: String, field: String) throws -> PushMode {
        switch text.trimmingCharacters(in: .whitespaces).lowercased() {
        case "on", "true": return .immediate
        case "false": return .off
        case let value:
            guard let mode = PushMode(rawValue: value) else {
                throw InputError("\(field) \"\(Input.printable(text))\" is not one of immediate, digest, off (or on)")
            }
            return mode
        }
    }
}
