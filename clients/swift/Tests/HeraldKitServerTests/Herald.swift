import Foundation
import Testing

@testable import HeraldKit

#if canImport(Glibc)
    import Glibc
#endif

/// The real `herald` binary (HERALD_BINARY) on a real database (HERALD_DATABASE_URL), as
/// scripts/client-test sets them up. Each test makes a tenant of its own and its own servers.
enum Herald {
    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    static func setting(_ name: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else {
            throw Missing(description: "\(name) is not set: run these tests with scripts/client-test in the Herald repository")
        }
        return value
    }

    /// Runs `herald ARGUMENTS` in `tenant`; answers its standard output, or throws with its error.
    @discardableResult
    static func run(_ arguments: [String], tenant: String? = nil) async throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try setting("HERALD_BINARY"))
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_TENANT"] = tenant
        environment["HERALD_LOG_LEVEL"] = "warning"
        process.environment = environment
        let folder = FileManager.default.temporaryDirectory
        let output = folder.appendingPathComponent("heraldkit-\(UUID().uuidString).out").creatingFile()
        let errors = folder.appendingPathComponent("heraldkit-\(UUID().uuidString).err").creatingFile()
        defer {
            try? FileManager.default.removeItem(at: output)
            try? FileManager.default.removeItem(at: errors)
        }
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: errors)
        // Waits for its end without holding a thread.
        let status: Int32 = try await withCheckedThrowingContinuation { done in
            process.terminationHandler = { done.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch {
                process.terminationHandler = nil
                done.resume(throwing: error)
            }
        }
        guard status == 0 else {
            let why = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
            throw Missing(description: "herald \(arguments.joined(separator: " ")): \(why)")
        }
        return (try? String(contentsOf: output, encoding: .utf8)) ?? ""
    }
}

/// A tenant of the test's own: a team, people, and a token for each.
struct Fixture {
    let tenant: String
    private(set) var tokens: [String: String] = [:]
    private(set) var tokenIDs: [String: String] = [:]

    /// People by first name: `alice` is `alice@<tenant>.test`, the team's manager.
    init(people: [String] = ["alice", "bob", "carol", "dave"]) async throws {
        tenant = "kit-" + UUID().uuidString.prefix(8).lowercased()
        try await Herald.run(["tenant", "create", tenant, "--name", "Kit \(tenant)"])
        try await Herald.run(["team", "create", "crew", "--name", "Crew"], tenant: tenant)
        for (index, name) in people.enumerated() {
            let email = self.email(name)
            try await Herald.run(["user", "add", email, "--name", name.capitalized], tenant: tenant)
            try await Herald.run(["team", "add-member", "crew", email, "--role", index == 0 ? "manager" : "member"], tenant: tenant)
            try await addToken(name)
        }
    }

    func email(_ name: String) -> String { "\(name)@\(tenant).test" }

    /// A new token for `name` (the last one is the one `token(_:)` gives).
    mutating func addToken(_ name: String) async throws {
        let json = try await Herald.run(["token", "create", "--user", email(name), "--name", "kit", "--json"], tenant: tenant)
        struct Created: Decodable {
            struct Credential: Decodable { var id: String }
            var credential: Credential
            var secret: String
        }
        let created = try JSONDecoder().decode(Created.self, from: Data(json.utf8))
        tokens[name] = created.secret
        tokenIDs[name] = created.credential.id
    }

    func token(_ name: String) -> String { tokens[name] ?? "" }

    func revoke(_ name: String) async throws {
        try await Herald.run(["token", "revoke", tokenIDs[name] ?? ""], tenant: tenant)
    }

    /// A client for `name` on `servers`.
    func client(_ name: String, _ servers: [Server]) -> HeraldClient {
        HeraldClient(HeraldClient.Configuration(servers: servers.map(\.url), token: token(name), timeout: .seconds(20)))
    }
}

/// A `herald serve` process on a port of its own, which a test may kill and start again there.
final class Server: @unchecked Sendable {
    let port: Int
    let folder: URL
    private var process: Process?
    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    init() async throws {
        port = try Self.freePort()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("heraldkit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try await start()
    }

    deinit { stop() }

    /// Starts it and waits until it says it listens (the first line of its output).
    func start() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Herald.setting("HERALD_BINARY"))
        process.arguments = ["serve", "--port", "\(port)", "--live-heartbeat", "5"]
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_LOG_LEVEL"] = "warning"
        process.environment = environment
        let output = folder.appendingPathComponent("out-\(UUID().uuidString).txt")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: folder.appendingPathComponent("err.txt").creatingFile())
        try process.run()
        self.process = process
        // The event: its URL on standard output. The limit only stops a broken build hanging.
        for _ in 0..<3_000 {
            if let text = try? String(contentsOf: output, encoding: .utf8), text.hasPrefix("http") { return }
            guard process.isRunning else { throw Herald.Missing(description: "herald serve ended: \(errors)") }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw Herald.Missing(description: "herald serve did not start in 300 s: \(errors)")
    }

    var errors: String { (try? String(contentsOf: folder.appendingPathComponent("err.txt"), encoding: .utf8)) ?? "" }

    /// SIGKILL: no close frames, no goodbyes.
    func kill() {
        guard let process, process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGSTOP: its sockets stay open and nothing answers, as a server behind a dead network.
    func freeze() {
        guard let process, process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGSTOP)
    }

    func stop() {
        guard let process, process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard bound else { throw Herald.Missing(description: "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

extension URL {
    func creatingFile() -> URL {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        return self
    }
}

/// Reads a session's events as a test waits for them: each wait is for an event, with a
/// limit that only stops a broken build from hanging the suite.
final class EventLog: @unchecked Sendable {
    private let events = Locked<[LiveEvent]>([])
    private var reader: Task<Void, Never>?
    let session: LiveSession

    init(_ session: LiveSession) {
        self.session = session
        reader = Task { [events] in
            for await event in session { events.withLock { $0.append(event) } }
        }
    }

    var all: [LiveEvent] { events.current }

    /// Waits until `test` holds for the events so far; answers what it found.
    @discardableResult
    func wait<Found>(
        for what: String, within limit: Duration = .seconds(300), _ test: ([LiveEvent]) -> Found?, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Found {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < limit {
            if let found = test(all) { return found }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("no \(what) within \(limit)", sourceLocation: sourceLocation)
        throw Herald.Missing(description: "no \(what)")
    }

    /// Waits for a connection (the first, or the `nth`).
    func connected(_ nth: Int = 1, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let test = { (events: [LiveEvent]) -> Bool? in
            events.count { if case .connection(.connected) = $0 { true } else { false } } >= nth ? true : nil
        }
        try await wait(for: "connection \(nth)", test, sourceLocation: sourceLocation)
    }

    /// Waits until `count` messages were handed over.
    func received(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await wait(for: "\(count) messages", { _ in self.messages.count >= count ? true : nil }, sourceLocation: sourceLocation)
    }

    /// The messages handed over, in order.
    var messages: [Message] {
        all.compactMap { if case .message(_, let message) = $0 { message } else { nil } }
    }

    var connections: Int { all.filter { $0 == .connection(.connecting) }.count }

    var finished: Bool {
        get async {
            await reader?.value
            return true
        }
    }
}
