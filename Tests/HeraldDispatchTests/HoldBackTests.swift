import Foundation
import HeraldCore
import HeraldEmulator
import HeraldHTTP
import HeraldPush
import HeraldTestSupport
import Synchronization
import Testing

@testable import HeraldDispatch
@testable import HeraldStore

/// What a worker does when a provider cannot be used: its own configuration is wrong, or the
/// endpoint does not answer (`SendGate` decides; these run it against the real thing).
struct HoldBackTests {
    /// A worker whose service account is wrong pauses itself, not the others: a worker
    /// configured right beside it sends everything at once, and the attempts the bad one
    /// made are not counted against the deliveries.
    @Test func aMisconfiguredWorkerDoesNotPauseAHealthyOne() async throws {
        try await DispatchHarness.with { harness in
            try await harness.registerMany("chidi@acme.test", count: 50, prefix: "chidi-phone-")
            _ = try await harness.assign()
            // Another project's service account: the token endpoint refuses its assertion.
            var object = try #require(
                try JSONSerialization.jsonObject(with: harness.emulator.serviceAccountJSON(tokenURI: harness.endpoints.http1 + "/token"))
                    as? [String: String])
            object["client_email"] = "someone-else@other-project.iam.gserviceaccount.com"
            let account = try ServiceAccount(json: try JSONSerialization.data(withJSONObject: object))
            let wrong = ProviderGateway(
                channels: [FCMProvider(account: account, endpoint: harness.endpoints.http1, http: harness.gateway.http)],
                http: harness.gateway.http)

            let bad = try await harness.withDispatcher(.init(worker: "misconfigured"), gateway: wrong) { dispatcher in
                try await dispatcher.run(.drain(horizon: .zero))
                return dispatcher.counters
            }
            #expect(bad.sent == 0 && bad.pausedForConfiguration > 0, "\(bad)")
            let stats = try await harness.store.dispatchStats(since: nil, tenant: nil)
            #expect(stats.pausedProviders.map(\.worker) == ["misconfigured"])

            let good = try await harness.drain(horizon: .zero)
            #expect(good.sent == 50 && good.retried == 0, "\(good)")
            #expect(await harness.emulator.acceptedCount() == 50)
            // The misconfigured worker's attempts are in history, not in the count.
            #expect(try await harness.count("SELECT max(attempts) FROM deliveries") == 1)
            #expect(
                try await harness.count("SELECT count(*) FROM delivery_attempt_history WHERE outcome = 'configuration_error'")
                    == bad.pausedForConfiguration)
        }
    }

    /// An endpoint that refuses every connection for a while: the circuit opens after a few
    /// faults, the deliveries wait queued without spending attempts, and when the endpoint is
    /// back they all go out.
    @Test func anEndpointOutageCostsAFewAttemptsNotOnePerRetry() async throws {
        try await DispatchHarness.with { harness in
            try await harness.registerMany("chidi@acme.test", count: 200, prefix: "chidi-phone-")
            _ = try await harness.assign()
            let outage = try OutageGateway(healthy: harness.gateway, harness: harness)
            let counters = try await harness.withDispatcher(gateway: outage) { dispatcher in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await dispatcher.run(.drain(horizon: .seconds(5))) }
                    // The outage lasts until the circuit has opened and held deliveries back
                    // (however long a loaded machine takes to get there), then a second more,
                    // so failing probes are part of it too.
                    let deadline = ContinuousClock.now + .seconds(120)
                    while dispatcher.counters.heldBack == 0, ContinuousClock.now < deadline {
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    try await Task.sleep(for: .seconds(1))
                    outage.endOutage()
                    try await group.waitForAll()
                }
                return dispatcher.counters
            }
            let back = outage.endedAt.withLock { $0 } ?? .now
            #expect(counters.sent == 200, "\(counters)")
            #expect(await harness.emulator.acceptedCount() == 200)
            #expect(outage.refusedSends.load(ordering: .relaxed) > 0, "the outage was never seen")
            // Three faults in a row open the circuit: only those are charged, plus one send
            // per delivery that worked.
            let attempts = try await harness.count("SELECT sum(attempts) FROM deliveries")
            #expect(attempts <= 200 + 3, "\(attempts) attempts for 200 deliveries")
            #expect(counters.heldBack > 0)
            print(
                "outage test: \(attempts) attempts for 200 deliveries; \(outage.refusedSends.load(ordering: .relaxed)) sends refused; drained \(back.duration(to: .now)) after the endpoint came back"
            )
        }
    }
}

/// The real providers, but pointed at a port nothing listens on (connection refused) until
/// `endOutage()`: an endpoint that is down, then back.
final class OutageGateway: PushGateway {
    private let healthy: ProviderGateway
    private let down: ProviderGateway
    private let isDown = Atomic<Bool>(true)
    let refusedSends = Atomic<Int>(0)
    let endedAt = Mutex<ContinuousClock.Instant?>(nil)

    init(healthy: ProviderGateway, harness: DispatchHarness) throws {
        self.healthy = healthy
        let nowhere = "http://127.0.0.1:9"  // the discard port: nothing listens on loopback
        let account = try ServiceAccount(json: harness.emulator.serviceAccountJSON(tokenURI: nowhere + "/token"))
        down = ProviderGateway(channels: [FCMProvider(account: account, endpoint: nowhere, http: healthy.http)], http: healthy.http)
    }

    func endOutage() {
        endedAt.withLock { $0 = .now }
        isDown.store(false, ordering: .relaxed)
    }

    func send(_ notification: PushNotification, provider: PushProvider, app: AppKind, expiration: Date?) async throws -> ProviderAnswer {
        guard isDown.load(ordering: .relaxed) else {
            return try await healthy.send(notification, provider: provider, app: app, expiration: expiration)
        }
        refusedSends.add(1, ordering: .relaxed)
        return try await down.send(notification, provider: provider, app: app, expiration: expiration)
    }
}

/// Credentials and CA files replaced under a running worker are read again: no restart.
struct RotationTests {
    /// The worker starts with another project's service account and pauses FCM (for ten
    /// minutes: longer than the test waits); the right one is put in place and everything
    /// goes out.
    @Test func aRotatedServiceAccountIsReadWithoutARestart() async throws {
        try await DispatchHarness.with { harness in
            try await withTemporaryDirectory { folder in
                try await harness.registerMany("chidi@acme.test", count: 20, prefix: "chidi-phone-")
                _ = try await harness.assign()
                let file = folder.appendingPathComponent("service-account.json")
                let right = harness.emulator.serviceAccountJSON(tokenURI: harness.endpoints.http1 + "/token")
                var object = try #require(try JSONSerialization.jsonObject(with: right) as? [String: String])
                object["client_email"] = "someone-else@other-project.iam.gserviceaccount.com"
                try JSONSerialization.data(withJSONObject: object).write(to: file)
                let gateway = ProviderGateway.fromEnvironment(
                    ["GOOGLE_APPLICATION_CREDENTIALS": file.path, "HERALD_FCM_ENDPOINT": harness.endpoints.http1], http: harness.gateway.http)
                let accepted = try await runUntilDelivered(20, harness: harness, gateway: gateway) { counters in
                    guard counters.pausedForConfiguration > 0 else { return false }
                    try right.write(to: file, options: .atomic)
                    return true
                }
                #expect(accepted == 20)
            }
        }
    }

    /// The worker trusts the wrong CA: TLS fails, which is the endpoint's trouble (the circuit
    /// opens, nothing is charged), not the credentials'. The right CA is put in the file and
    /// everything goes out.
    @Test func aReplacedCAFileIsTrustedWithoutARestart() async throws {
        try await DispatchHarness.with(endpoint: \.https) { harness in
            try await withTemporaryDirectory { folder in
                try await harness.registerMany("chidi@acme.test", count: 20, prefix: "chidi-phone-")
                _ = try await harness.assign()
                let caFile = folder.appendingPathComponent("ca.pem")
                try EmulatorCertificates().caPEM.write(to: caFile, atomically: true, encoding: .utf8)
                let account = folder.appendingPathComponent("service-account.json")
                try harness.emulator.serviceAccountJSON(tokenURI: harness.endpoints.https + "/token").write(to: account)
                let http = try HTTPClient(configuration: .init(extraCAFile: caFile.path), logger: testLogger)
                defer { http.shutdown() }
                let gateway = ProviderGateway.fromEnvironment(
                    ["GOOGLE_APPLICATION_CREDENTIALS": account.path, "HERALD_FCM_ENDPOINT": harness.endpoints.https], http: http)
                let accepted = try await runUntilDelivered(20, harness: harness, gateway: gateway) { counters in
                    guard counters.heldBack > 0 else { return false }
                    try harness.emulator.certificates.caPEM.write(to: caFile, atomically: true, encoding: .utf8)
                    return true
                }
                #expect(accepted == 20)
                #expect(try await harness.count("SELECT count(*) FROM delivery_attempt_history WHERE outcome = 'configuration_error'") == 0)
                #expect(try await harness.count("SELECT max(attempts) FROM deliveries") <= 2)
            }
        }
    }

    /// Runs a worker (configuration pauses of ten minutes) until `count` messages arrived or
    /// two minutes passed (a bound, not a speed: isolated, it takes about a second; only the
    /// reread can deliver anything before the pause ends); `fix` is called with the counters
    /// until it says it fixed things.
    private func runUntilDelivered(
        _ count: Int, harness: DispatchHarness, gateway: ProviderGateway, fix: @escaping @Sendable (Dispatcher.Counters) throws -> Bool
    ) async throws -> Int {
        let configuration = Dispatcher.Configuration(
            retry: RetryPolicy(base: .milliseconds(100), cap: .seconds(2)), pollInterval: .milliseconds(200), pauseOnConfigurationError: .seconds(600)
        )
        return try await harness.withDispatcher(configuration, gateway: gateway) { dispatcher in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await dispatcher.run(.forever) }
                defer { dispatcher.shutdown() }
                let deadline = ContinuousClock.now + .seconds(120)
                var fixed: ContinuousClock.Instant?
                while ContinuousClock.now < deadline {
                    if fixed == nil, try fix(dispatcher.counters) { fixed = .now }
                    if fixed != nil, await harness.emulator.acceptedCount() >= count { break }
                    try await Task.sleep(for: .milliseconds(50))
                }
                let accepted = await harness.emulator.acceptedCount()
                if let fixed { print("rotation: \(accepted) of \(count) delivered \(fixed.duration(to: .now)) after the file was replaced") }
                dispatcher.shutdown()
                try await group.waitForAll()
                return accepted
            }
        }
    }
}
