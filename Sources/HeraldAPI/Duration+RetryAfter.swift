extension Duration {
    /// This wait as a `Retry-After` value: whole seconds, rounded up, at least 1.
    public var retryAfterSeconds: String {
        let seconds = Double(components.seconds) + Double(components.attoseconds) / 1e18
        return "\(max(1, Int(seconds.rounded(.up))))"
    }
}
