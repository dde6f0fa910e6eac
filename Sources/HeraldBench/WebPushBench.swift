import Foundation
import HeraldCore
import HeraldEmulator
import HeraldHTTP
import HeraldPush
import Logging

/// `herald bench webpush` (docs/cli.md#benchmarks): what a Web Push costs Herald's CPU.
/// The work of a push (its Declarative body, RFC 8291 encryption with a fresh key, the VAPID
/// header) is timed on one thread with nothing else in between, so the thread's CPU clock is
/// that work alone; then pushes go to an in-process emulator over HTTP, whose CPU (it decrypts
/// every body) is in the process's figure.
public enum WebPushBench {
    public struct Report: Encodable, Sendable {
        public let build: String
        public let pushes: Int
        /// Microseconds of CPU a push, by what was timed.
        public let cpuMicrosecondsPerPush: [String: Double]
        /// Pushes a second over HTTP to the in-process emulator.
        public let sentPerSecond: Double

        public var fields: [(String, String)] {
            [("scenario", "webpush"), ("build", build), ("pushes", "\(pushes)")]
                + cpuMicrosecondsPerPush.sorted { $0.key < $1.key }.map { ("CPU a push, \($0.key) (µs)", String(format: "%.1f", $0.value)) }
                + [("sent over HTTP a second", String(format: "%.0f", sentPerSecond))]
        }
    }

    /// - Parameters:
    ///   - pushes: pushes timed on one thread (each phase).
    ///   - sends: pushes sent over HTTP to the emulator.
    public static func run(pushes: Int, sends: Int, logger: Logger) async throws -> Report {
        let credentials = try VAPIDCredentials(pem: VAPIDCredentials.newKey().pem, subject: "mailto:bench@herald.test")
        var configuration = EmulatorConfiguration()
        configuration.leanRecording = true
        return try await Emulator.withRunning(configuration, logger: logger) { emulator, _ in
            let policy = DestinationPolicy(.webPush, allowHTTP: true, allowPrivate: true)
            var browsers: [WebPushSubscription] = []
            for _ in 0..<16 {
                guard let given = emulator.subscribeBrowser(applicationServerKey: credentials.publicKey) else { throw CancellationError() }
                browsers.append(try WebPushSubscription(endpoint: given.endpoint, p256dh: given.p256dh, auth: given.auth, policy: policy))
            }
            let cpu = try timeOnOneThread(pushes, browsers: browsers, credentials: credentials)
            let sent = try await send(sends, to: browsers, provider: credentials, policy: policy, logger: logger)
            #if DEBUG
                let build = "debug"
            #else
                let build = "release"
            #endif
            return Report(
                build: build, pushes: pushes,
                cpuMicrosecondsPerPush: cpu.merging(["sent over HTTP, this process with the emulator (which decrypts)": sent.cpu]) { $1 },
                sentPerSecond: sent.rate)
        }
    }

    /// The work of a push, on this thread alone (no suspension in between: the thread's clock is its CPU).
    static func timeOnOneThread(_ pushes: Int, browsers: [WebPushSubscription], credentials: VAPIDCredentials) throws -> [String: Double] {
        let expiration = Date().addingTimeInterval(86_400)
        let content = NotificationContent(
            title: "Activity Update", body: "Nov 27, 2026 - Bob Stone has started activity with deadline Dec 4, 2026 for Replace the pump seal.",
            data: ["type": "activity_started", "activityId": "0193a1b2-0000-7000-8000-00000000abcd", "priority": "p2", "teamId": "t"],
            badge: 2, sound: true, threadID: "0193a1b2-0000-7000-8000-00000000abcd")
        var cpu: [String: Double] = [:]
        // What a worker does for each push: the token reused per push service.
        cpu["message + encryption + VAPID (token reused per origin)"] = try perPush(pushes) { index in
            let browser = browsers[index % browsers.count]
            let push = PushNotification(token: browser.endpoint, content: content, collapseID: content.threadID, subscription: browser)
            let message = WebPushMessage(push, expiration: expiration, now: Date())
            _ = try WebPushEncryption.encrypt(message.body, to: browser)
            _ = try credentials.authorization(for: browser.origin)
        }
        cpu["encryption alone (400 bytes)"] = try perPush(pushes) { index in
            _ = try WebPushEncryption.encrypt(Array(repeating: 0x41, count: 400), to: browsers[index % browsers.count])
        }
        // Were the token signed for every push (no cache): the price of one ES256 signature.
        cpu["VAPID signed anew every push"] = try perPush(max(1, pushes / 4)) { index in
            let origin = browsers[index % browsers.count].origin
            credentials.forget(origin)
            _ = try credentials.authorization(for: origin)
        }
        return cpu
    }

    /// This thread's CPU a call of `work`, in microseconds.
    static func perPush(_ count: Int, _ work: (Int) throws -> Void) rethrows -> Double {
        let start = threadCPU()
        for index in 0..<count { try work(index) }
        return (threadCPU() - start) / Double(count) * 1_000_000
    }

    static func threadCPU() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1_000_000_000
    }

    static func processCPU() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1_000_000
    }

    /// `count` pushes to the emulator's browsers over HTTP, 64 at a time: this process's CPU a push
    /// (the emulator's decryption in it) and the rate.
    static func send(
        _ count: Int, to browsers: [WebPushSubscription], provider credentials: VAPIDCredentials, policy: DestinationPolicy, logger: Logger
    )
        async throws -> (cpu: Double, rate: Double)
    {
        let http = try HTTPClient(
            configuration: .init(maxInFlight: 64, maxCleartextConnectionsPerHost: 64, http1Only: true, engine: .libcurl), logger: logger)
        defer { http.shutdown() }
        let provider = WebPushProvider(credentials: credentials, policy: policy, http: http)
        let started = ContinuousClock.now
        let cpuStart = processCPU()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<64 {
                group.addTask {
                    var index = lane
                    while index < count {
                        let browser = browsers[index % browsers.count]
                        let push = PushNotification(
                            token: browser.endpoint,
                            content: NotificationContent(
                                title: "Activity Update", body: "Bob Stone has started Replace the pump seal.", data: ["type": "activity_started"],
                                badge: 1, sound: true, threadID: "t"),
                            subscription: browser)
                        let answer = try await provider.deliver(push, expiration: nil)
                        guard answer.httpStatus == 201 else { throw WebPushBenchFailure(answer: "\(answer)") }
                        index += 64
                    }
                }
            }
            try await group.waitForAll()
        }
        let seconds = started.duration(to: .now).timeInterval
        return ((processCPU() - cpuStart) / Double(max(1, count)) * 1_000_000, Double(count) / seconds)
    }
}

/// A push the emulator did not take while benchmarking.
struct WebPushBenchFailure: Error, CustomStringConvertible {
    let answer: String
    var description: String { "the emulator did not take a push: \(answer)" }
}
