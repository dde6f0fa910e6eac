/// How a bench runs its dispatchers, whatever the scenario.
public struct BenchSettings: Sendable {
    /// Dispatchers (workers) in this process.
    public var workers: Int
    /// Sends in flight per worker.
    public var concurrency: Int
    /// Deliveries claimed per round trip.
    public var batch: Int
    /// Leave the bench tenants in the database.
    public var keep: Bool

    public init(workers: Int = 1, concurrency: Int = 512, batch: Int = 512, keep: Bool = false) {
        self.workers = workers
        self.concurrency = concurrency
        self.batch = batch
        self.keep = keep
    }
}
