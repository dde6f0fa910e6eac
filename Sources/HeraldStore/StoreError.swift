import HeraldCore

/// A workflow command refused, in one line that names what and why.
public struct StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The class of refusal; new codes may be added.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// A tenant, team, person, device or activity that does not exist (in this tenant).
        public static let notFound = Code("not_found")
        /// The actor may not do this.
        public static let forbidden = Code("forbidden")
        /// The action does not apply to the activity's current status.
        public static let invalidTransition = Code("invalid_transition")
        /// Someone else changed the record first; reload and retry.
        public static let conflict = Code("conflict")
        /// The record exists already.
        public static let alreadyExists = Code("already_exists")
        /// The request contradicts the data (a manager as assignee, a retired token…).
        public static let invalid = Code("invalid")
        /// The caller's copy is out of date: the version it named is not the current one.
        public static let stale = Code("stale")

        public var description: String { name }
    }

    public let code: Code
    public let description: String
    /// For `.invalidTransition`: the activity's status and what it allows from there.
    public var currentStatus: ActivityStatus?
    public var allowedActions: [ActivityAction] = []

    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}
