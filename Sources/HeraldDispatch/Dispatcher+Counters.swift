extension Dispatcher {
    /// Running totals, for progress lines and tests.
    public struct Counters: Sendable, Equatable {
        public var eventsFannedOut = 0
        /// Failures of an event's own fan-out this worker counted against it (`FanOutFailure`).
        public var fanOutFailures = 0
        /// Events this worker passed over: unreadable, or failing on their own too often.
        public var eventsPassedOver = 0
        public var deliveriesQueued = 0
        /// Deliveries this worker leased (by a claim, or as fan-out wrote them).
        public var deliveriesLeased = 0
        public var sent = 0
        public var retried = 0
        public var deadTokens = 0
        public var failed = 0
        public var expired = 0
        public var cancelled = 0
        public var pausedForConfiguration = 0
        /// Deliveries put back unsent, or unanswered and not charged an attempt, while their
        /// provider was held back (a configuration pause or an endpoint that does not answer).
        public var heldBack = 0
        /// Sends that left and got no answer in time, while their provider was held back (of
        /// `heldBack`), or for the second time (the delivery is then `unanswered` and not sent
        /// again). Each may have reached the provider, so it may arrive twice (as may each of
        /// `retried`; docs/notifications.md).
        public var unanswered = 0
        /// Deliveries given back unsent because too little of their lease was left to begin a
        /// send (a claim or fan-out transaction that took most of a lease on a stalled machine).
        public var leasesRanShort = 0
        /// Acknowledgements that came too late: the lease had passed to another worker.
        public var lateAcknowledgements = 0
        /// Timers whose event this worker appended (reminders, escalations, deadline notices).
        public var timersFired = 0
        /// Due timers this worker found no longer applied (the activity had moved on).
        public var timersSkipped = 0
        /// Deliveries leased to this worker whose outcome is not written yet: being sent, or
        /// sent and waiting in the next batch of acknowledgements. At most `concurrency`, so
        /// that a worker that dies leaves at most that many sent and unrecorded (the
        /// duplicates its deliveries may get once another worker takes them over).
        public var inFlight = 0

        public init() {}
    }
}
