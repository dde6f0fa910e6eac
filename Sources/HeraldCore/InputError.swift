/// User input Herald refuses, with one line that says what is wrong and what is allowed.
public struct InputError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    /// The API's name of the field at fault, when the check that refused knows it (the API
    /// names it in its problem document).
    public let field: String?
    public init(_ description: String, field: String? = nil) {
        self.description = description
        self.field = field
    }
}
