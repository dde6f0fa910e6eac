import ArgumentParser
import Foundation
import HeraldCore
import HeraldStore

struct PolicyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policy", abstract: "See and set how activities are chased: reminders, escalation, deadlines.",
        discussion: """
            Per priority: an activity waiting for approval reminds its manager after --approval-reminder and tells \
            the tenant's admins after --escalate-after (each once per wait; a rejection and a new completion request \
            start a new wait). On the deadline date the assignee is reminded at --deadline-reminder-at (their time \
            zone), and when the date has ended unapproved the assignee and the manager hear it is overdue. An \
            assignment or a request for approval its person has not opened (read in any app) after --unopened is \
            pushed to them again, and told to the manager (an assignment) or the admins (a request for approval); \
            off by default. Durations: 90s, 30m, 4h, 1d, or off.
            """,
        subcommands: [Show.self, Set.self])

    static func show(_ policy: ReminderPolicy) {
        var table = TextTable("PRIORITY", "APPROVAL REMINDER", "ESCALATE AFTER", "UNOPENED")
        for priority in Priority.allCases {
            table.add(
                priority.rawValue, policy.approvalReminder[priority]?.description ?? "off", policy.escalateAfter[priority]?.description ?? "off",
                policy.unopened[priority]?.description ?? "off")
        }
        print(table.render(empty: ""))
        print(
            "deadline reminder at \(policy.deadlineReminderAt.map { "\($0) (the assignee's time zone)" } ?? "off"); overdue \(policy.overdue ? "on" : "off")"
        )
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the tenant's policy (the defaults until an admin sets one).")

        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let policy = try await withTenant(tenant) { try await $0.policy() }
            if options.json { return try printJSON(policy) }
            PolicyCommand.show(policy)
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change the tenant's policy (admins only); what is not named stays as it is.",
            discussion: """
                Example: herald policy set --approval-reminder p0=30m,p1=4h,p2=24h,p3=off --escalate-after p0=2h \
                --deadline-reminder-at 09:00 --overdue on --unopened p0=15m,p1=4h --as ada@acme.test. Activities waiting now follow the new \
                policy at once, measured from when their wait began.
                """)

        @Option(name: .customLong("approval-reminder"), help: ArgumentHelp("PRIORITY=DURATION,… (e.g. p0=30m,p3=off).", valueName: "list"))
        var approvalReminder: String?
        @Option(name: .customLong("escalate-after"), help: ArgumentHelp("PRIORITY=DURATION,… (e.g. p0=2h,p1=24h).", valueName: "list"))
        var escalateAfter: String?
        @Option(name: .customLong("deadline-reminder-at"), help: ArgumentHelp("HH:MM on the deadline date, or off.", valueName: "time"))
        var deadlineReminderAt: String?
        @Option(help: ArgumentHelp("on or off.", valueName: "on|off")) var overdue: String?
        @Option(help: ArgumentHelp("PRIORITY=DURATION,… (e.g. p0=15m,p1=4h).", valueName: "list")) var unopened: String?
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var actor: ActorOptions
        @OptionGroup var options: GlobalOptions

        func validate() throws {
            if approvalReminder == nil, escalateAfter == nil, deadlineReminderAt == nil, overdue == nil, unopened == nil {
                throw ValidationError(
                    "say what to change: --approval-reminder, --escalate-after, --deadline-reminder-at, --overdue or --unopened")
            }
        }

        func run() async throws {
            let email = try actor.email()
            let change = try await withTenant(tenant) { session in
                let policy = try await session.policy().applying(
                    approvalReminder: approvalReminder, escalateAfter: escalateAfter, deadlineReminderAt: deadlineReminderAt,
                    overdue: overdue, unopened: unopened)
                return try await session.setPolicy(policy, actor: email)
            }
            if options.json { return try printJSON(change.policy) }
            PolicyCommand.show(change.policy)
            print("timers of waiting activities: \(change.scheduled) scheduled, \(change.cancelled) turned off")
        }
    }
}
