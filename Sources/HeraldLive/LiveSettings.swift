/// The live channel's limits (docs/live-protocol.md), configurable on `herald serve`.
public struct LiveSettings: Sendable, Equatable {
    /// Sockets one person may hold at once, across their apps.
    public var perPerson: Int
    /// Sockets one server holds at most.
    public var perServer: Int
    /// Seconds between heartbeats (WebSocket pings); a ping unanswered by the next one closes.
    public var heartbeat: Int
    /// Frames waiting to be written before the socket is closed with 1013.
    public var queueLimit: Int
    /// Incoming frames a second, and in a burst, before the socket is closed with 1008.
    public var floodRate: Double
    public var floodBurst: Double
    /// Incoming frames waiting to be handled before the socket is closed with 1008: an app
    /// that sends faster than its frames are handled, even within the flood limit. As many as
    /// the flood limit's burst unless given: a burst the limit allows is never refused for
    /// arriving at once.
    public var inboxLimit: Int
    /// The largest incoming message; larger ones close the socket with 1009.
    public var maxFrameBytes: Int
    /// How long frames stay readable by cursor (at least 7 days, or history's retention).
    public var retention: Duration

    public init(
        perPerson: Int = 20, perServer: Int = 10_000, heartbeat: Int = 15, queueLimit: Int = 1_000, floodRate: Double = 20,
        floodBurst: Double = 100, inboxLimit: Int? = nil, maxFrameBytes: Int = 4_096, retention: Duration = .seconds(7 * 86_400)
    ) {
        self.perPerson = perPerson
        self.perServer = perServer
        self.heartbeat = heartbeat
        self.queueLimit = queueLimit
        self.floodRate = floodRate
        self.floodBurst = floodBurst
        self.inboxLimit = inboxLimit ?? Int(floodBurst.rounded(.up))
        self.maxFrameBytes = maxFrameBytes
        self.retention = retention
    }
}
