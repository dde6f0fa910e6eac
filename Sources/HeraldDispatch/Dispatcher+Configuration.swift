import Foundation
import HeraldCore

extension Dispatcher {
    /// How a dispatcher works: its name, how much it takes on at once, leases, retries, pauses.
    public struct Configuration: Sendable {
        /// Names this worker in leases and in the attempts it records.
        public var worker: String
        /// Sends in flight at once.
        public var concurrency: Int
        /// Deliveries claimed per round trip.
        public var claimBatch: Int
        /// Events fanned out per round trip.
        public var eventBatch: Int
        /// An event with more recipients than this is fanned out in parts (a small first one,
        /// then `fanOutLaterPart` at a time), one transaction each, so that sending starts
        /// after the first part is committed; a smaller one is written whole.
        public var fanOutPart: Int
        /// The first part of such an event is this small (at most `fanOutPart`): its
        /// pushes go out while the rest is written (a part of 1,000 took 200-350 ms to write).
        public var fanOutFirstPart: Int
        /// The parts between the first and the last are at most this large (at least
        /// `fanOutPart`; twice it unless set): with two written at once, fewer and larger
        /// statements wrote a 10,000-person group in 0.51-0.62 s instead of 0.80-1.06 s while
        /// the worker sent at full speed (`fanOutParts(of:)` cuts them).
        public var fanOutLaterPart: Int
        /// Parts of such an event written at once (after the first, each on a connection of
        /// its own), so that a large group's fan-out is not one round trip after another.
        public var fanOutConcurrency: Int
        /// An event whose own fan-out fails this many times with an error its rows raise (a
        /// constraint, a value out of range; `FanOutFailure`) is marked fanned out with
        /// that error and passed over, so that it does not hold the queue behind it.
        public var fanOutAttempts: Int
        /// How long a claim holds without renewal; renewed at a third of it.
        public var lease: Duration
        public var retry: RetryPolicy
        /// The backstop poll when no NOTIFY arrives (jittered between half and all of it).
        public var pollInterval: Duration
        /// How long this worker leaves a provider alone after a configuration error (its
        /// credentials or endpoint refused) before one probe. Other workers are not paused.
        public var pauseOnConfigurationError: Duration
        /// Only these tenants (empty: all).
        public var tenants: [UUID]
        /// Days of history past this are dropped whole (checked hourly); `nil` keeps them.
        /// Partitions ahead are made either way.
        public var historyRetention: HistoryRetention?

        public init(
            worker: String = Configuration.defaultWorkerName(), concurrency: Int = 256, claimBatch: Int = 256,
            eventBatch: Int = 200, fanOutPart: Int = 1_000, fanOutFirstPart: Int = 100, fanOutLaterPart: Int? = nil, fanOutConcurrency: Int = 2,
            fanOutAttempts: Int = 5, lease: Duration = .seconds(10), retry: RetryPolicy = RetryPolicy(),
            pollInterval: Duration = .seconds(1), pauseOnConfigurationError: Duration = .seconds(30), tenants: [UUID] = [],
            historyRetention: HistoryRetention? = nil
        ) {
            self.worker = worker
            self.concurrency = max(1, concurrency)
            self.claimBatch = max(1, claimBatch)
            self.eventBatch = max(1, eventBatch)
            self.fanOutPart = max(1, fanOutPart)
            self.fanOutFirstPart = min(max(1, fanOutFirstPart), self.fanOutPart)
            self.fanOutLaterPart = max(self.fanOutPart, fanOutLaterPart ?? 2 * self.fanOutPart)
            self.fanOutConcurrency = max(1, fanOutConcurrency)
            self.fanOutAttempts = max(1, fanOutAttempts)
            self.lease = lease
            self.retry = retry
            self.pollInterval = pollInterval
            self.pauseOnConfigurationError = pauseOnConfigurationError
            self.tenants = tenants
            self.historyRetention = historyRetention
        }

        /// Outcomes waiting to be written that make a batch to write at once. A delivery
        /// holds its slot in `concurrency` until its outcome is written, so the batch is
        /// written when a quarter of the slots wait on it, well before sends run short of room.
        public var acknowledgementFlush: Int { max(1, min(claimBatch, concurrency) / 4) }

        /// How an event for `count` recipients is cut into parts: `fanOutFirstPart` (its
        /// pushes go out while the rest is written), then parts of at most `fanOutLaterPart`
        /// in whole rounds of `fanOutConcurrency` of equal size, then a last part as small as
        /// the first. The last one marks the event done, so it is written after all the others:
        /// the less it holds, the sooner the event is done after them. (Cut into parts of
        /// `fanOutLaterPart` as they came, a 10,000-person group was written as 100, two
        /// rounds of 2,000 and 2,000, then 1,900 alone: 6,000 recipients one after another;
        /// now 100, three rounds of 1,634 and 1,634, then 100: 5,102.)
        public func fanOutParts(of count: Int) -> [Range<Int>] {
            guard count > fanOutFirstPart else { return count > 0 ? [0..<count] : [] }
            let last = min(count - fanOutFirstPart, fanOutFirstPart)
            let middle = count - fanOutFirstPart - last
            var parts = [0..<fanOutFirstPart]
            if middle > 0 {
                var pieces = (middle + fanOutLaterPart - 1) / fanOutLaterPart
                // Whole rounds, unless that made parts smaller than the first.
                let rounded = (pieces + fanOutConcurrency - 1) / fanOutConcurrency * fanOutConcurrency
                if middle / rounded >= fanOutFirstPart { pieces = rounded }
                let size = (middle + pieces - 1) / pieces
                var start = fanOutFirstPart
                while start < fanOutFirstPart + middle {
                    let end = min(fanOutFirstPart + middle, start + size)
                    parts.append(start..<end)
                    start = end
                }
            }
            parts.append((count - last)..<count)
            return parts
        }

        /// `host-pid-random`: unique per process, readable in history.
        public static func defaultWorkerName() -> String {
            let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "host"
            return "\(host)-\(getpid())-\(UUID().uuidString.prefix(6).lowercased())"
        }
    }
}
