import ArgumentParser
import Foundation
import HeraldCore
import HeraldStore

struct ActivityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "activity", abstract: "Assign activities and move them through their life.",
        discussion: """
            assign (a manager) → assigned → start (the assignee) → running → complete (the assignee) → \
            completion_requested → approve (a manager) → approved, or reject (a manager) → running again.
            """,
        subcommands: [Assign.self, Start.self, Complete.self, Approve.self, Reject.self, List.self, Show.self])

    struct Assign: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Assign a new activity to a member of a team; prints its id.")

        @Option(help: "The team's slug.") var team: String
        @Option(help: "The assignee's email (a member of the team).") var to: String
        @Option(help: "What is to be done (1-200 characters).") var name: String
        @Option(help: "Deadline, YYYY-MM-DD.") var deadline: String
        @Option(help: "p0 (urgent) to p3.") var priority = "p2"
        @OptionGroup var actor: ActorOptions
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let actor = try actor.email()
            let deadline = try Input.date(deadline)
            let priority = try Input.priority(priority)
            let activity = try await withTenant(tenant) {
                try await $0.assignActivity(actor: actor, team: team, assignee: to, name: name, deadline: deadline, priority: priority)
            }
            if options.json { return try printJSON(activity) }
            print(activity.id.text)
        }
    }

    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Start an assigned activity (the assignee).")
        @OptionGroup var action: ActionOptions
        func run() async throws { try await action.perform(.start) }
    }

    struct Complete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Ask for approval of a running activity (the assignee).")
        @OptionGroup var action: ActionOptions
        func run() async throws { try await action.perform(.complete) }
    }

    struct Approve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Approve a completed activity (a manager of its team).")
        @OptionGroup var action: ActionOptions
        func run() async throws { try await action.perform(.approve) }
    }

    struct Reject: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send a completed activity back to running (a manager of its team).")
        @OptionGroup var action: ActionOptions
        @Option(help: "Why, for the assignee (up to 1,000 characters).") var reason: String?
        func run() async throws { try await action.perform(.reject, reason: reason) }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List activities, newest first.")

        @Option(help: "Only this team's.") var team: String?
        @Option(help: "Only those in this status.") var status: String?
        @Option(help: "Only those assigned to this email.") var assignee: String?
        @Option(help: "At most this many (default 100).") var limit = 100
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let status = try status.map { try Input.choice($0, field: "status", as: ActivityStatus.self) }
            let activities = try await withTenant(tenant) {
                try await $0.activities(
                    viewer: nil, filter: .init(team: team, status: status, assignee: assignee), limit: limit, after: nil
                ).items
            }
            if options.json { return try printJSON(activities) }
            var table = TextTable("ID", "PRIORITY", "STATUS", "DEADLINE", "TEAM", "ASSIGNEE", "NAME")
            for activity in activities {
                table.add(
                    activity.id.text, activity.priority.rawValue, activity.status.rawValue, activity.deadline.description,
                    activity.team.slug, activity.assignee.email, activity.name)
            }
            print(table.render(empty: "no activities"))
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show an activity, its history, and its reminders (due, sent, or why not).")

        @Argument(help: "The activity's id.") var id: String
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        struct Output: Encodable {
            let activity: ActivityRecord
            let transitions: [ActivityTransitionRecord]
            let events: [OutboxEvent]
            let timers: [ActivityTimerRecord]
        }

        func run() async throws {
            let id = try Input.id(id, field: "activity")
            let output = try await withTenant(tenant) { session in
                let activity = try await session.activity(id: id)
                return Output(
                    activity: activity, transitions: try await session.transitions(activity: activity.id),
                    events: try await session.events(activity: activity.id), timers: try await session.timers(activity: activity.id))
            }
            if options.json { return try printJSON(output) }
            let activity = output.activity
            printFields([
                ("id", activity.id.text), ("name", activity.name), ("status", "\(activity.status.rawValue) (version \(activity.version))"),
                ("priority", activity.priority.rawValue), ("deadline", activity.deadline.description),
                ("team", "\(activity.team.name) (\(activity.team.slug))"),
                ("manager", "\(activity.manager.name) <\(activity.manager.email)>"),
                ("assignee", "\(activity.assignee.name) <\(activity.assignee.email)>")
            ])
            print()
            var table = TextTable("WHEN", "ACTION", "FROM", "TO", "BY", "REASON")
            for step in output.transitions {
                table.add(
                    step.at.shortDisplay, step.action.rawValue, step.from?.rawValue ?? "-", step.to.rawValue, step.actor.email, step.reason ?? "")
            }
            print(table.render(empty: "no transitions"))
            guard !output.timers.isEmpty else { return }
            print()
            var timers = TextTable("DUE", "TIMER", "STATUS", "WHY")
            for timer in output.timers {
                timers.add(timer.dueAt.shortDisplay, timer.kind.event.rawValue, timer.status.rawValue, timer.reason ?? "")
            }
            print(timers.render(empty: ""))
        }
    }
}

/// The id, actor and tenant every state change takes.
struct ActionOptions: ParsableArguments {
    @Argument(help: "The activity's id.") var id: String
    @OptionGroup var actor: ActorOptions
    @OptionGroup var tenant: TenantOptions
    @OptionGroup var options: GlobalOptions

    func perform(_ action: ActivityAction, reason: String? = nil) async throws {
        let actor = try actor.email()
        let id = try Input.id(id, field: "activity")
        let activity = try await withTenant(tenant) { try await $0.act(action, on: id, actor: actor, reason: reason) }
        if options.json { return try printJSON(activity) }
        print("\(activity.id.text) is now \(activity.status.rawValue)")
    }
}
