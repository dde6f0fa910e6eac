import Foundation
import HeraldKit
import Testing

/// Every request the client makes is one the API's contract (openapi/openapi.json in the
/// Herald repository) has: a path, a method and query parameters it documents.
@Suite struct ContractTests {
    /// Records each request and answers 503: a boundary of the test's own (the server is tested
    /// for real in HeraldKitServerTests).
    final class Recorder: HTTPTransport, @unchecked Sendable {
        private let lock = NSLock()
        private(set) var requests: [HTTPRequestData] = []
        func send(_ request: HTTPRequestData, to server: URL, timeout: Duration) async throws -> HTTPResponseData {
            lock.withLock { requests.append(request) }
            return HTTPResponseData(status: 503, headers: ["retry-after": "1"], body: Data())
        }
    }

    struct Contract {
        var operations: [(pattern: [String], method: String, query: Set<String>)] = []

        init() throws {
            let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../../openapi/openapi.json")
            let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
            let paths = try #require(document["paths"] as? [String: [String: Any]])
            for (path, methods) in paths {
                for (method, operation) in methods {
                    let parameters = ((operation as? [String: Any])?["parameters"] as? [[String: Any]]) ?? []
                    let query = Set(parameters.filter { $0["in"] as? String == "query" }.compactMap { $0["name"] as? String })
                    operations.append((path.split(separator: "/").map(String.init), method.uppercased(), query))
                }
            }
        }

        /// Whether the contract has `method target`.
        func has(_ method: String, _ target: String) -> Bool {
            let components = URLComponents(string: target)
            let segments = (components?.path ?? target).split(separator: "/").map(String.init)
            let names = Set(components?.queryItems?.map(\.name) ?? [])
            return operations.contains { operation in
                operation.method == method && operation.pattern.count == segments.count
                    && zip(operation.pattern, segments).allSatisfy { $0.hasPrefix("{") || $0 == $1 } && names.isSubset(of: operation.query)
            }
        }
    }

    @Test func everyCallIsInTheContract() async throws {
        let contract = try Contract()
        let recorder = Recorder()
        let client = HeraldClient(HeraldClient.Configuration(servers: [URL(string: "http://herald.test")!], token: "hrp_x", transport: recorder))
        let id = UUID()
        let calls: [@Sendable () async throws -> Void] = [
            { _ = try await client.me() },
            { _ = try await client.activities(ActivityFilter(status: .running, team: "ops", assignee: "a@b.test"), limit: 10, cursor: "c") },
            { _ = try await client.activity(id) },
            { try await client.registerLiveActivity(id, updateToken: Data([1, 2]), app: .member) },
            { _ = try await client.preferences() },
            { _ = try await client.updatePreferences(PreferencesChange(showPresence: true)) },
            { _ = try await client.conversations() },
            { _ = try await client.conversation(id) },
            { _ = try await client.createConversation(with: ["a@b.test"], name: "n", team: "ops") },
            { _ = try await client.messages(in: id, limit: 20, before: 9, receipts: true) },
            { _ = try await client.send(text: "t", to: id, clientId: "c", sentAt: Date()) },
            { try await client.markRead(id) },
            { try await client.markReceived(id) },
            { try await client.viewing(id, for: 60) },
            { _ = try await client.rename(id, to: "n") },
            { try await client.mute(id) },
            { try await client.mute(id, false) },
            { try await client.leave(id) },
            { _ = try await client.presence(of: "a@b.test") },
            { _ = try await client.presence(of: ["a@b.test", "c@d.test"]) },
            { _ = try await client.liveTicket() },
            { _ = try await client.devices() },
            { _ = try await client.register(.fcm(token: "t", app: .member, platform: "android")) },
            { try await client.remove(.fcmInstallation(fid: "f", app: .member, platform: "android")) },
            { _ = try await client.inbox.page(.unread, archived: true, limit: 20, cursor: "c") },
            { _ = try await client.inbox.item(id) },
            { _ = try await client.inbox.counts() },
            { _ = try await client.inbox.mark(.archive, [id], device: id) },
            { _ = try await client.inbox.mark(.unread, allBefore: Date()) },
            { _ = try await client.inbox.opened(push: ["notificationId": id.uuidString], action: .approve, device: id) },
            { _ = try await client.inbox.delivered(push: ["notificationId": id.uuidString]) },
            { _ = try await client.assign("n", to: "a@b.test", team: "ops", deadline: "2030-01-01", priority: .p1, idempotencyKey: "k") },
            { _ = try await client.people() },
            { _ = try await client.person("a@b.test") },
            { _ = try await client.addPerson(NewPerson(email: "a@b.test", name: "A", admin: false, locale: "de", timeZone: "UTC")) },
            { _ = try await client.issueToken(for: "a@b.test", name: "n", expiresIn: "30d") },
            { _ = try await client.tokens(of: "a@b.test") },
            { try await client.revokeToken(id, of: "a@b.test") },
            { _ = try await client.teams() },
            { _ = try await client.createTeam(slug: "ops", name: "Ops") },
            { _ = try await client.members(of: "ops") },
            { _ = try await client.setMembership("a@b.test", in: "ops", role: .manager) },
            { try await client.removeMembership("a@b.test", from: "ops") },
            {
                let filter = HistoryFilter(
                    since: "7d", status: .sent, user: "a@b.test", activity: id, conversation: id, event: .chatMessage, digest: id)
                _ = try await client.history(filter, limit: 10, cursor: "c")
            },
            { _ = try await client.notification(id) },
            { _ = try await client.why(id, user: "a@b.test") },
            { _ = try await client.stats(since: "24h") },
            { _ = try await client.webhooks() },
            { _ = try await client.webhook(id) },
            { _ = try await client.createWebhook(url: "https://h.test", events: ["*"], description: "d") },
            { try await client.removeWebhook(id) },
            { _ = try await client.rotateWebhookSecret(id) },
            { _ = try await client.webhookAttempts(id, limit: 10, cursor: "c") },
            { _ = try await client.replayWebhook(id, since: "2h") },
            { _ = try await client.policy() },
            {
                let every = ReminderPolicy.PerPriority(p0: "30m", p1: "4h", p2: "1d", p3: "off")
                _ = try await client.setPolicy(
                    ReminderPolicy(approvalReminder: every, escalateAfter: every, deadlineReminderAt: "09:00", overdue: true))
            }
        ]
        for call in calls {
            await #expect(throws: HeraldError.self) { try await call() }
        }
        for transition in Transition.allCases {
            await #expect(throws: HeraldError.self) { try await client.transition(id, transition, ifVersion: 2, reason: "no") }
        }
        #expect(recorder.requests.count == calls.count + Transition.allCases.count)
        for request in recorder.requests {
            #expect(contract.has(request.method, request.target), "\(request.method) \(request.target) is not in openapi/openapi.json")
            #expect(request.headers.contains { $0.name == "Authorization" && $0.value == "Bearer hrp_x" })
        }
        // The transitions carry the version they were given.
        #expect(recorder.requests.filter { $0.target.hasSuffix("/approve") }.first?.headers.contains { $0 == ("If-Match", "\"2\"") } == true)
    }
}
