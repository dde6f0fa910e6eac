/// A notification's words, as the phone shows them.
public struct RenderedMessage: Sendable, Equatable, Codable {
    public var title: String
    public var body: String

    public init(title: String, body: String) {
        self.title = title
        self.body = body
    }
}
