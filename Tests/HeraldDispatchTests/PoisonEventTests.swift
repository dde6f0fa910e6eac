import Foundation
import HeraldCore
import HeraldEmulator
import HeraldPostgres
import HeraldTestSupport
import Testing

@testable import HeraldDispatch
@testable import HeraldStore

/// An event whose rows the database refuses every time must not hold the queue behind it:
/// after such a failure the next batch is written event by event, the events that go
/// through are sent, and the one at fault is counted and, after `fanOutAttempts`, passed
/// over with its error. A failure that is not the events' (a lost connection, a deadlock)
/// is only retried.
@Suite struct PoisonEventTests {
    @Test func onlyErrorsTheEventsRowsMayRaiseAreCountedAgainstThem() {
        func server(_ state: String) -> PostgresError { PostgresError(kind: .server, message: "refused", sqlState: state) }
        for state in ["23514", "23503", "23505", "22001", "22P02", "54000"] {
            #expect(FanOutFailure.mayBeTheEvents(server(state)), "\(state)")
        }
        for state in ["40001", "40P01", "08006", "57P01", "57014", "53100", "25006", "42703", "XX000"] {
            #expect(!FanOutFailure.mayBeTheEvents(server(state)), "\(state)")
        }
        #expect(!FanOutFailure.mayBeTheEvents(PostgresError(kind: .server, message: "no state")))
        #expect(!FanOutFailure.mayBeTheEvents(PostgresError(kind: .connection, message: "gone", sqlState: "23514")))
        #expect(!FanOutFailure.mayBeTheEvents(PostgresError(kind: .commitUnknown, message: "unknown")))
        #expect(FanOutFailure.mayBeTheEvents(PostgresError(kind: .decoding, message: "not a uuid")))
        #expect(FanOutFailure.mayBeTheEvents(InputError("no template for activity.assigned")))
        #expect(!FanOutFailure.mayBeTheEvents(CancellationError()))

        // One failing alone, or beside events that went through, is counted; every event of
        // a batch of several failing is the database's doing, and is not.
        #expect(FanOutFailure.counts(failed: 1, written: 0))
        #expect(FanOutFailure.counts(failed: 2, written: 1))
        #expect(!FanOutFailure.counts(failed: 2, written: 0))
        #expect(!FanOutFailure.counts(failed: 0, written: 3))

        #expect(FanOutFailure.recorded(InputError(String(repeating: "x", count: 2_000))).count == 500)
    }

    /// Makes PostgreSQL refuse, as a check constraint would, every row inserted into `table`
    /// for which `condition` holds (a boolean expression over `NEW`).
    static func refuse(_ harness: DispatchHarness, table: String = "notifications", where condition: String) async throws {
        try await harness.store.pool.query(
            """
            CREATE FUNCTION refuse_\(unsafeRaw: table)() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF \(unsafeRaw: condition) THEN
                    RAISE EXCEPTION 'this row of \(unsafeRaw: table) is refused' USING ERRCODE = 'check_violation';
                END IF;
                RETURN NEW;
            END
            $$
            """)
        try await harness.store.pool.query(
            "CREATE TRIGGER refuse_\(unsafeRaw: table) BEFORE INSERT ON \(unsafeRaw: table) FOR EACH ROW EXECUTE FUNCTION refuse_\(unsafeRaw: table)()"
        )
    }

    static func eventID(of activity: ActivityRecord, _ harness: DispatchHarness) async throws -> UUID {
        try await harness.store.pool.query("SELECT id FROM outbox WHERE activity_id = \(activity.id)").single().decode(UUID.self, at: 0)
    }

    @Test func anEventTheDatabaseRefusesIsPassedOverAndTheRestIsSent() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "chidi-phone", app: .member)
            let first = try await harness.assign(name: "First")
            let poisoned = try await harness.assign(name: "Refused")
            let last = try await harness.assign(name: "Last")
            let poisonedEvent = try await Self.eventID(of: poisoned, harness)
            try await Self.refuse(harness, where: "NEW.event_id = '\(poisonedEvent.uuidString.lowercased())'")

            // (A drain ends only once nothing is left to fan out.)
            let configuration = Dispatcher.Configuration(fanOutAttempts: 3, retry: RetryPolicy(base: .milliseconds(100), cap: .seconds(2)))
            let counters = try await harness.drain(configuration)
            #expect(counters.fanOutFailures == 3 && counters.eventsPassedOver == 1 && counters.eventsFannedOut == 2)

            #expect(try await harness.count("SELECT count(*) FROM outbox WHERE fanned_out_at IS NULL") == 0)
            let (failures, error) = try await harness.store.pool.query(
                "SELECT fan_out_failures, fan_out_error FROM outbox WHERE id = \(poisonedEvent)"
            ).single().decode((Int, String?).self)
            #expect(failures == 3)
            #expect(error?.contains("this row of notifications is refused") == true, "\(String(describing: error))")
            #expect(try await harness.count("SELECT count(*) FROM outbox WHERE fan_out_failures > 0 OR fan_out_error IS NOT NULL") == 1)
            for activity in [first, last] {
                #expect(
                    try await harness.count("SELECT count(*) FROM notifications WHERE activity_id = '\(activity.id.uuidString.lowercased())'") == 1)
            }
            #expect(try await harness.count("SELECT count(*) FROM notifications WHERE activity_id = '\(poisoned.id.uuidString.lowercased())'") == 0)
            #expect(await harness.emulator.messages().map(\.token) == ["chidi-phone", "chidi-phone"])

            // An admin asking why sees the failures and the error; the assignee does not.
            let (admin, assignee) = try await harness.store.withTenant(harness.tenant) { session in
                (
                    try await session.why(activity: poisoned.id, viewer: try await session.person(email: "root@acme.test")),
                    try await session.why(activity: poisoned.id, viewer: try await session.person(email: "chidi@acme.test"))
                )
            }
            let fanOut = try #require(admin.first?.fanOut)
            #expect(fanOut.failures == 3 && fanOut.passedOverAt != nil && !fanOut.pending)
            #expect(fanOut.error.contains("this row of notifications is refused"))
            #expect(assignee.count == 1 && assignee.first?.fanOut == nil)
            let other = try await harness.store.withTenant(harness.tenant) {
                try await $0.why(activity: first.id, viewer: try await $0.person(email: "root@acme.test"))
            }
            #expect(other.first?.fanOut == nil)
        }
    }

    /// Every event of a batch of several refused: the database is more likely at fault than
    /// each of them, so none is counted and the batch is rolled back, to be tried again.
    /// An event alone in its batch is counted.
    @Test func aBatchThatFailsWholeIsNotCountedAgainstItsEvents() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "chidi-phone", app: .member)
            _ = try await harness.assign(name: "First")
            _ = try await harness.assign(name: "Second")
            try await Self.refuse(harness, where: "true")
            try await harness.withDispatcher { dispatcher in
                await #expect(throws: PostgresError.self) { try await dispatcher.fanOutOnce() }
                await #expect(throws: PostgresError.self) { try await dispatcher.fanOutOnce(oneByOne: true) }
            }
            #expect(try await harness.count("SELECT count(*) FROM outbox WHERE fanned_out_at IS NULL AND fan_out_failures = 0") == 2)

            let single = Dispatcher.Configuration(eventBatch: 1, retry: RetryPolicy(base: .milliseconds(100), cap: .seconds(2)))
            try await harness.withDispatcher(single) { dispatcher in
                let outcome = try await dispatcher.fanOutOnce(oneByOne: true)
                #expect(outcome == (1, 0))
            }
            #expect(try await harness.count("SELECT count(*) FROM outbox WHERE fanned_out_at IS NULL AND fan_out_failures = 1") == 1)

            // The database fixed, both go out.
            try await harness.store.pool.query("DROP TRIGGER refuse_notifications ON notifications")
            _ = try await harness.drain()
            #expect(try await harness.count("SELECT count(*) FROM notifications") == 2)
            #expect(await harness.emulator.messages().count == 2)
        }
    }
}

extension LargeEventTests {
    /// A large event whose later part the database refuses: each failed fan-out is counted,
    /// and after `fanOutAttempts` the event is passed over. The parts written before stay
    /// sent, and an event behind it goes out.
    @Test func aLargeEventTheDatabaseRefusesIsPassedOver() async throws {
        try await DispatchHarness.with { harness in
            let conversation = try await group(harness, people: 12)
            try await send(harness, to: conversation, "to everyone")
            // The 11th of the 12 recipients (alice sends) in the order fan-out reads them.
            // Chosen by email, the person could
            // sort anywhere among those whose ids share a millisecond (UUIDv7 is random within
            // one), and land in a middle part: one run in several then wrote 6, not 10.
            let refused = try await harness.store.pool.query(
                """
                SELECT person_id FROM conversation_participants
                WHERE conversation_id = \(conversation) AND person_id <> (SELECT id FROM people WHERE email = 'alice@acme.test')
                ORDER BY joined_at, person_id OFFSET 10 LIMIT 1
                """
            ).single().decode(UUID.self, at: 0).uuidString.lowercased()
            try await PoisonEventTests.refuse(harness, where: "NEW.recipient_id = '\(refused)'")
            try await harness.register("chidi@acme.test", token: "chidi-phone", app: .member)
            _ = try await harness.assign(name: "Behind it")

            let configuration = Dispatcher.Configuration(
                fanOutPart: 5, fanOutFirstPart: 2, fanOutAttempts: 2, retry: RetryPolicy(base: .milliseconds(100), cap: .seconds(2)))
            let counters = try await harness.drain(configuration)
            #expect(counters.fanOutFailures == 2 && counters.eventsPassedOver == 1)

            #expect(try await harness.count("SELECT count(*) FROM outbox WHERE fanned_out_at IS NULL") == 0)
            let (failures, error) = try await harness.store.pool.query(
                "SELECT fan_out_failures, fan_out_error FROM outbox WHERE kind = 'chat.message'"
            ).single().decode((Int, String?).self)
            #expect(failures == 2)
            #expect(error?.contains("this row of notifications is refused") == true, "\(String(describing: error))")
            // The 12 recipients in parts of 2, 4, 4 and 2: the last, which holds the 11th, was
            // refused every time, the others stay written.
            let written = try await harness.count("SELECT count(*) FROM notifications WHERE kind = 'chat.message'")
            #expect(written >= 8 && written <= 10, "\(written)")
            #expect(try await harness.count("SELECT count(*) FROM notifications WHERE recipient_id = '\(refused)'") == 0)
            #expect(try await harness.count("SELECT count(*) FROM notifications WHERE kind <> 'chat.message'") == 1)
            #expect(await harness.emulator.messages().contains { $0.token == "chidi-phone" })
        }
    }
}
