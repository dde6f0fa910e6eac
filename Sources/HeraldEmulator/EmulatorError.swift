/// Why the emulator could not serve, in words a person can act on.
public struct EmulatorError: Error, Sendable, CustomStringConvertible {
    public let description: String

    static func portInUse(_ port: Int) -> Self {
        .init(description: "port \(port) is already in use; stop what listens there, or pick another port (0 picks a free one)")
    }
}
