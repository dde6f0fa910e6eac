import Foundation

extension InboxEngagement {
    /// One thing the person did with a notification, for history's timeline.
    public struct Step: Sendable, Equatable {
        public let event: Event
        public let at: Date
        public let device: UUID?
        /// The action, for `interacted`.
        public let action: String?

        /// In words, without the time and device: `opened`, `approve from the push`, ….
        public var phrase: String {
            switch event {
            case .delivered: "the push arrived"
            case .seen: "seen"
            case .read: "read"
            case .opened: "opened"
            case .interacted: "\(action ?? "an action") from the push"
            case .archived: "archived"
            }
        }
    }

    /// What happened, in order of time (a tie in the order the events happen: the push
    /// arrives, is seen, opened, read, acted on, archived). `why`, history and the console
    /// show it after the delivery.
    public var timeline: [Step] {
        let order: [Event] = [.delivered, .seen, .opened, .read, .interacted, .archived]
        let marks: [(Event, Mark?)] = [
            (.delivered, delivered), (.seen, seen), (.opened, opened), (.read, read), (.interacted, interacted), (.archived, archived)
        ]
        return marks.compactMap { event, mark in
            mark.map { Step(event: event, at: $0.at, device: $0.device, action: event == .interacted ? action : nil) }
        }.sorted { ($0.at, order.firstIndex(of: $0.event) ?? 0) < ($1.at, order.firstIndex(of: $1.event) ?? 0) }
    }
}
