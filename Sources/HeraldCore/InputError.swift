/// User input Herald refuses, with one line that says what is wrong and what is allowed.
public struct InputError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
