/// Credentials or settings that cannot work, in one line that names the problem. Never
/// contains a private key or an access token.
public struct PushConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
