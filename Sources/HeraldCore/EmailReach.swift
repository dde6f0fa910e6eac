/// When a notification goes by email too (docs/notifications.md#email): email reaches a person
/// a push cannot. Fan-out decides it per recipient; the statement that writes the
/// notifications applies it, since only there is it known whether a device can be pushed.
public enum EmailReach: Int, Sendable, Equatable {
    /// Never by email (a Live Activity, a badge, or no email configured).
    case never = 0
    /// By email when the person has no active device on the app it is for.
    case whenNoDevice = 1
    /// By email as well as pushed: an assignment or a request for approval they left
    /// unopened, or an event they want both ways.
    case always = 2
    /// By email instead of pushed (pushed when they have no address to email).
    case only = 3

    /// The reach of an event's notification for one recipient, by the channel they chose.
    /// - Parameters:
    ///   - forActor: the notification tells the person who was waited on (an `unopened`
    ///     escalation's late person): the push they ignored is not enough.
    ///   - priority: a P0 follows the breakthrough rules: one they turned email off for is
    ///     still emailed when no device can be pushed.
    public static func of(_ event: EventKind, forActor: Bool, channel: NotificationChannel = .push, priority: Priority? = nil) -> EmailReach {
        switch channel {
        case .push: event == .activityUnopened && forActor ? .always : .whenNoDevice
        case .pushOnly: NotificationPreferences.breaksThrough(event, priority: priority) ? .whenNoDevice : .never
        case .both: .always
        case .email: .only
        }
    }
}
