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
        if let user {
            return try await Self.execute(
                "/usr/sbin/runuser",
                ["-u", user, "--", "/usr/bin/env"] + environment.map { "\($0.key)=\($0.value)" } + [binary.path] + arguments,
                environment: ProcessInfo.processInfo.environment)
        }
        return try await Self.execute(binary.path, arguments, environment: environment)
    }

    /// Runs a shell script with this environment; `$0` is the herald binary.
    /// For input Swift strings cannot carry, such as invalid UTF-8.
    func runShell(_ script: String) async throws -> Result {
        try await Self.execute("/bin/sh", ["-c", script, HeraldCLI.binary.path], environment: environment)
    }

    /// How long one command may run: one that hangs is killed and fails its test instead of
    /// holding the suite, and CI, until CI's own limit.
    static let timeLimit: Duration = .seconds(600)

    /// Runs the command (`LaunchedCommand`) and waits for it, killing it past `timeLimit`.
    private static func execute(_ executable: String, _ arguments: [String], environment: [String: String]) async throws -> Result {
        // Files, not pipes: a server the command starts must not hold our read end open.
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cli-\(UUID().uuidString)")
        let (outPath, errPath) = (base.appendingPathExtension("out").path, base.appendingPathExtension("err").path)
        let out = open(outPath, O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0o600)
        let err = open(errPath, O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0o600)
        defer {
            if out >= 0 { close(out) }
            if err >= 0 { close(err) }
            unlink(outPath)
            unlink(errPath)
        }
        guard out >= 0, err >= 0 else { throw SpawnFailure(message: "cannot create \(outPath): \(String(cString: strerror(errno)))") }
        let command = try LaunchedCommand(executable, arguments, environment: environment, output: out, error: err)
        let watchdog = Task {
            guard (try? await Task.sleep(for: timeLimit)) != nil else { return }
            kill(command.processIdentifier, SIGKILL)
        }
        await command.waitForExit()
        watchdog.cancel()
        return Result(
            status: command.terminationStatus,
            stdout: try String(contentsOfFile: outPath, encoding: .utf8),
            stderr: try String(contentsOfFile: errPath, encoding: .utf8)
                + (command.wasKilled ? "\n(killed by SIGKILL: the time limit for one command is \(timeLimit))" : ""))
    }

    static func withCStrings<Value>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> Value) -> Value {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        pointers.append(nil)
        defer { for pointer in pointers { free(pointer) } }
        return pointers.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { preconditionFailure("an array with its terminator is never empty") }
            return body(base)
        }
    }

    struct SpawnFailure: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }
}

extension HeraldCLI {
    /// A long-running `herald …` (such as `herald worker`), not waited for: its standard
    /// output goes to `stdout` (or is discarded), its errors are discarded. The caller ends it
    /// (`terminate`, or `kill` with its `processIdentifier`) and waits with `waitForExit`.
    func launch(_ arguments: [String], stdout: URL? = nil) throws -> LaunchedCommand {
        var output: Int32 = -1
        if let stdout {
            output = open(stdout.path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o600)
            guard output >= 0 else { throw SpawnFailure(message: "cannot create \(stdout.path): \(String(cString: strerror(errno)))") }
        }
        defer { if output >= 0 { close(output) } }
        return try LaunchedCommand(HeraldCLI.binary.path, arguments, environment: environment, output: output)
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
