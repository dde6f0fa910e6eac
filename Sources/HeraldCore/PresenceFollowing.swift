/// Who is told of whose presence over the live channel, and what it costs (docs/live-protocol.md,
/// "Presence"). A socket follows the other participants of its person's conversations of at
/// most `smallConversation` people, and the people it subscribed to (`presence.subscribe`, at
/// most `maxSubscriptions`): nobody else, so that a person coming online costs work in
/// proportion to the sockets that follow them, never to the size of their team. Each
/// subscription is someone the subscriber may see (`AccessPolicy.maySeePresence`). A socket's
/// changes are batched: one `presence` frame each `batchSeconds` at most.
public enum PresenceFollowing {
    /// The largest conversation whose participants follow each other.
    public static let smallConversation = 100
    /// The most people one socket may subscribe to.
    public static let maxSubscriptions = 100
    /// The least time between two `presence` frames of one socket.
    public static let batchSeconds = 1.0
    /// The most people `GET /v1/presence` names at once.
    public static let maxAsked = 100
    /// The longest `people` parameter of `GET /v1/presence`, in Unicode scalars: room for 100
    /// ids or typical emails, and well inside the request's header limit once percent-encoded.
    public static let maxAskedLength = 6_000
}
