import Foundation
import HeraldTesting
import Testing

/// Runs the real `herald` binary, as the user would.
struct HeraldCLI {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// The binary next to the test bundle (both live in the build folder), or `HERALD_BIN`.
    static let binary: URL = {
        if let path = ProcessInfo.processInfo.environment["HERALD_BIN"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        let runner = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var folder = runner.deletingLastPathComponent()
        while folder.path != "/" {
            let candidate = folder.appendingPathComponent("herald")
            if FileManager.default.isExecutableFile(atPath: candidate.path), !candidate.hasDirectoryPath {
                return candidate
            }
            folder.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/herald")
    }()

    var environment: [String: String]

    /// A clean environment: no HERALD_* from the caller, logs quiet unless asked.
    init(home: URL, extra: [String: String] = [:]) {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HERALD_") && !$0.key.hasPrefix("PG") }
        environment["HERALD_HOME"] = home.path
        environment["HERALD_LOG_LEVEL"] = "warning"
        environment.merge(extra) { $1 }
        self.environment = environment
    }

    /// Runs `herald arguments…`, optionally as another account (`runuser -u`).
    ///
    /// Waits without blocking a thread of the cooperative pool: the command may need a lock
    /// that another test holds, and that test needs a thread to finish.
    func run(_ arguments: [String], asUser user: String? = nil, binary: URL = HeraldCLI.binary) async throws -> Result {
        let process = Process()
        if let user {
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
            process.arguments =
                ["-u", user, "--", "/usr/bin/env"] + environment.map { "\($0.key)=\($0.value)" }
                + [binary.path] + arguments
        } else {
            process.executableURL = binary
            process.arguments = arguments
            process.environment = environment
        }
        return try await Self.execute(process)
    }

    /// Runs a shell script with this environment; `$0` is the herald binary.
    /// For input Swift strings cannot carry, such as invalid UTF-8.
    func runShell(_ script: String) async throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, HeraldCLI.binary.path]
        process.environment = environment
        return try await Self.execute(process)
    }

    /// How long one command may run: one that hangs is killed and fails its test instead of
    /// holding the suite, and CI, until CI's own limit.
    static let timeLimit: Duration = .seconds(600)

    private static func execute(_ process: Process) async throws -> Result {
        // Files, not pipes: a server the command starts must not hold our read end open.
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cli-\(UUID().uuidString)")
        let outURL = base.appendingPathExtension("out")
        let errURL = base.appendingPathExtension("err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
        }
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        var watchdog: Task<Void, Never>?
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            process.terminationHandler = { _ in continuation.resume() }
            do {
                try process.run()
                let pid = process.processIdentifier
                watchdog = Task {
                    guard (try? await Task.sleep(for: timeLimit)) != nil else { return }
                    kill(pid, SIGKILL)
                }
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        watchdog?.cancel()
        try out.close()
        try err.close()
        let killed = process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
        return Result(
            status: process.terminationStatus,
            stdout: try String(contentsOf: outURL, encoding: .utf8),
            stderr: try String(contentsOf: errURL, encoding: .utf8)
                + (killed ? "\n(killed by SIGKILL: the time limit for one command is \(timeLimit))" : ""))
    }
}

extension HeraldCLI {
    /// A long-running `herald …` (such as `herald worker`), not waited for: its standard
    /// output goes to `stdout` (or is discarded), its errors are discarded. The caller ends it
    /// with `kill` and reaps it with `waitForExit`.
    func launch(_ arguments: [String], stdout: URL? = nil) throws -> Process {
        let process = Process()
        process.executableURL = HeraldCLI.binary
        process.arguments = arguments
        process.environment = environment
        if let stdout {
            _ = FileManager.default.createFile(atPath: stdout.path, contents: nil)
            process.standardOutput = try FileHandle(forWritingTo: stdout)
        } else {
            process.standardOutput = FileHandle.nullDevice
        }
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }
}

extension Process {
    /// Waits for the process to end without blocking a thread of the cooperative pool.
    func waitForExit() async {
        while isRunning { try? await Task.sleep(for: .milliseconds(20)) }
    }
}

/// Runs `herald arguments`, expects it to succeed, and returns its standard output trimmed.
@discardableResult
func ok(_ cli: HeraldCLI, _ arguments: [String]) async throws -> String {
    let result = try await cli.run(arguments)
    #expect(result.status == 0, "herald \(arguments.joined(separator: " ")): \(result.stderr)")
    return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Makes `fixture` with the real binary, each command expected to succeed.
func make(_ fixture: CLIFixture, with cli: HeraldCLI) async throws {
    for command in fixture.commands { try await ok(cli, command) }
}

/// Tenant `acme` (Acme Corp) with team `ops` (Field Ops): Alice Moreau its manager, Chidi
/// Okafor a member (`CLIFixture.acmeOps`).
func addAcmeOps(_ cli: HeraldCLI) async throws {
    try await make(.acmeOps, with: cli)
}
