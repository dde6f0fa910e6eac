/// The connection under a live socket: what `LiveSocket` asks of it, and nothing else
/// (HeraldAPI's is a WebSocket channel of SwiftNIO's). Every call returns at once.
public protocol LiveConnection: Sendable {
    /// Writes text frames, in order, with one flush; `written` runs when the last is out (or
    /// the connection is gone).
    func write(_ texts: [String], written: @escaping @Sendable () -> Void)
    /// A ping (the heartbeat).
    func ping()
    /// A pong answering the app's ping with its data.
    func pong(_ data: [UInt8])
    /// The closing frame; then the connection ends when the app answers, or after two seconds,
    /// or at once when this close answers the app's (`answering`).
    func close(code: UInt16, reason: String, answering: Bool)
    /// Ends the connection now, without a close.
    func drop()
}

/// The close codes the live channel uses (RFC 6455 §7.4 and the application range).
public enum LiveCloseCode {
    public static let goingAway: UInt16 = 1001
    public static let protocolError: UInt16 = 1002
    public static let invalidData: UInt16 = 1007
    public static let policyViolation: UInt16 = 1008
    public static let tooBig: UInt16 = 1009
    public static let tryAgainLater: UInt16 = 1013
    /// The credential was revoked or expired, or the console session ended.
    public static let unauthorized: UInt16 = 4401
    /// No answer to the heartbeat.
    public static let heartbeatMissed: UInt16 = 4408
}
