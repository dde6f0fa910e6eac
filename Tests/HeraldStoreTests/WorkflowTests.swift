import Foundation
import HeraldCore
import HeraldPostgres
import HeraldTestSupport
import Testing

@testable import HeraldStore

@Suite struct WorkflowTests {
    @Test func anActivityGoesThroughItsWholeLifeAndEveryStepIsAnEvent() async throws {
        try await TestDatabase.withStore { store, _ in
            let fixture = try await WorkflowFixture.make(store)
            let assigned = try await fixture.assign()
            #expect(assigned.status == .assigned && assigned.version == 1)
            let steps: [(ActivityAction, String, ActivityStatus)] = [
                (.start, "chidi@acme.test", .running),
                (.complete, "chidi@acme.test", .completionRequested),
                (.reject, "alice@acme.test", .running),
                (.complete, "chidi@acme.test", .completionRequested),
                (.approve, "alice@acme.test", .approved)
            ]
            for (index, (action, actor, status)) in steps.enumerated() {
                let after = try await fixture.act(action, assigned.id, by: actor, reason: action == .reject ? "needs tests" : nil)
                #expect(after.status == status)
                #expect(after.version == index + 2)
            }

            let (events, transitions, people) = try await fixture.run { session in
                (try await session.events(activity: assigned.id), try await session.transitions(activity: assigned.id), try await session.people())
            }
            let id = Dictionary(uniqueKeysWithValues: people.map { ($0.email, $0.id) })
            #expect(
                events.map(\.kind) == [
                    .activityAssigned, .activityStarted, .activityCompletionRequested, .activityRejected,
                    .activityCompletionRequested, .activityApproved
                ])
            let alice = try #require(id["alice@acme.test"])
            let chidi = try #require(id["chidi@acme.test"])
            #expect(events.map(\.recipientIDs) == [[chidi], [alice], [alice], [chidi], [alice], [chidi]])
            #expect(events.map(\.actorID) == [alice, chidi, chidi, alice, chidi, alice])
            #expect(events.map(\.sequence) == events.map(\.sequence).sorted())
            #expect(transitions.map(\.action) == [.assign, .start, .complete, .reject, .complete, .approve])
            #expect(transitions[3].reason == "needs tests")
        }
    }

    @Test func theEventCarriesASnapshotThatRenamesDoNotRewrite() async throws {
        try await TestDatabase.withStore { store, _ in
            let fixture = try await WorkflowFixture.make(store)
            let activity = try await fixture.assign()
            try await store.pool.query("UPDATE activities SET name = 'Renamed' WHERE id = \(activity.id)")
            try await store.pool.query("UPDATE people SET display_name = 'Someone Else' WHERE email = 'alice@acme.test'")
            let payload = try await store.pool.query("SELECT payload FROM outbox WHERE activity_id = \(activity.id)")
                .single().decode(PostgresJSON<ActivityEventPayload>.self, at: 0).value
            #expect(payload.event == .activityAssigned)
            #expect(payload.activityName == "Ship v2")
            #expect(payload.manager.name == "Alice Moreau")
            #expect(payload.actor.name == "Alice Moreau")
            #expect(payload.assignee.name == "Chidi Okafor")
            #expect(payload.priority == .p0)
            #expect(payload.deadline.description == "2026-11-28")
            #expect(payload.teamName == "Field Ops")
            #expect(payload.recipients == [.init(id: activity.assignee.id, app: .member)])
            #expect(abs(payload.occurredAt.timeIntervalSince(activity.createdAt)) < 0.001)
        }
    }

    @Test func aCommittedEventWakesListeners() async throws {
        try await TestDatabase.withStore { store, configuration in
            let fixture = try await WorkflowFixture.make(store)
            let listener = PostgresListener(configuration: configuration, channels: [Store.outboxChannel], logger: testLogger)
            defer { listener.stop() }
            var events = listener.events.makeAsyncIterator()
            #expect(await events.next() == .connected(reconnected: false))
            _ = try await fixture.assign()
            #expect(await events.next() == .notification(channel: Store.outboxChannel, payload: fixture.tenant.id.uuidString.lowercased()))
        }
    }

    @Test func refusalsSayWhyAndWriteNothing() async throws {
        try await TestDatabase.withStore { store, _ in
            let fixture = try await WorkflowFixture.make(store)
            let other = try await WorkflowFixture.make(store, slug: "globex")
            let activity = try await fixture.assign()
            let running = try await fixture.act(.start, activity.id, by: "chidi@acme.test")
            let before = try await fixture.footprint()

            func refused(_ code: StoreError.Code, _ needle: String, _ body: () async throws -> Void) async {
                do {
                    try await body()
                    Issue.record("expected a refusal containing \(needle)")
                } catch let error as StoreError {
                    #expect(error.code == code, "\(error)")
                    #expect(error.description.contains(needle), "\(error)")
                } catch {
                    Issue.record("expected a StoreError, got \(error)")
                }
            }
            // A member assigning.
            await refused(.forbidden, "only a manager of the team or an admin") {
                _ = try await fixture.run {
                    try await $0.assignActivity(
                        actor: "dana@acme.test", team: "ops", assignee: "chidi@acme.test", name: "x", deadline: try Input.date("2026-12-01"))
                }
            }
            // A manager of another team approving.
            await refused(.forbidden, "erin@acme.test may not approve") {
                _ = try await fixture.act(.approve, running.id, by: "erin@acme.test")
            }
            // Someone other than the assignee completing.
            await refused(.forbidden, "only the assignee") { _ = try await fixture.act(.complete, running.id, by: "dana@acme.test") }
            // Approving a running activity names the status and what it allows.
            await refused(.invalidTransition, "it is running; from running only complete is allowed") {
                _ = try await fixture.act(.approve, running.id, by: "alice@acme.test")
            }
            // Assigning to someone outside the team, or to a manager.
            await refused(.invalid, "not a member of team ops") {
                _ = try await fixture.run {
                    try await $0.assignActivity(
                        actor: "alice@acme.test", team: "ops", assignee: "erin@acme.test", name: "x", deadline: try Input.date("2026-12-01"))
                }
            }
            // Another tenant's activity by id is not there.
            await refused(.notFound, "no activity") {
                _ = try await other.run { try await $0.act(.complete, on: running.id, actor: "chidi@acme.test") }
            }
            // Unknown tenant, team, person, activity.
            await refused(.notFound, "no tenant \"nope\"") { _ = try await store.tenant(slug: "nope") }
            await refused(.notFound, "no team \"nope\"") {
                _ = try await fixture.run {
                    try await $0.assignActivity(
                        actor: "alice@acme.test", team: "nope", assignee: "chidi@acme.test", name: "x", deadline: try Input.date("2026-12-01"))
                }
            }
            await refused(.notFound, "no person nobody@acme.test") { _ = try await fixture.act(.start, running.id, by: "nobody@acme.test") }
            await refused(.notFound, "no activity") { _ = try await fixture.act(.start, UUID(), by: "chidi@acme.test") }

            #expect(try await fixture.footprint() == before)
            #expect(try await fixture.run { try await $0.activity(id: running.id) }.version == running.version)
        }
    }

    @Test func anAdminActsAsAManagerOfAnyTeam() async throws {
        try await TestDatabase.withStore { store, _ in
            let fixture = try await WorkflowFixture.make(store)
            let activity = try await fixture.run {
                try await $0.assignActivity(
                    actor: "root@acme.test", team: "ops", assignee: "dana@acme.test", name: "Audit", deadline: try Input.date("2026-12-01"))
            }
            _ = try await fixture.act(.start, activity.id, by: "dana@acme.test")
            _ = try await fixture.act(.complete, activity.id, by: "dana@acme.test")
            #expect(try await fixture.act(.approve, activity.id, by: "root@acme.test").status == .approved)
        }
    }

    @Test func ofTwentyConcurrentDecisionsExactlyOneWins() async throws {
        try await TestDatabase.withStore(poolSize: 20) { store, _ in
            let fixture = try await WorkflowFixture.make(store)
            let activity = try await fixture.assign()
            _ = try await fixture.act(.start, activity.id, by: "chidi@acme.test")
            _ = try await fixture.act(.complete, activity.id, by: "chidi@acme.test")

            let outcomes = await withTaskGroup(of: Result<ActivityRecord, any Error>.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        do {
                            return .success(try await fixture.act(index.isMultiple(of: 2) ? .approve : .reject, activity.id, by: "alice@acme.test"))
                        } catch {
                            return .failure(error)
                        }
                    }
                }
                var outcomes: [Result<ActivityRecord, any Error>] = []
                for await outcome in group { outcomes.append(outcome) }
                return outcomes
            }
            let winners = outcomes.compactMap { try? $0.get() }
            #expect(winners.count == 1)
            for case .failure(let error) in outcomes {
                let code = (error as? StoreError)?.code
                #expect(code == .conflict || code == .invalidTransition, "\(error)")
            }
            let events = try await fixture.run { try await $0.events(activity: activity.id) }
            #expect(events.count == 4)
            #expect([.activityApproved, .activityRejected].contains(events.last?.kind))
        }
    }
}
