import Foundation

/// `herald serve` as a child process of this one (`herald bench live`): the same binary and
/// environment, its standard output read for the URL it listens on.
struct ServeProcess {
    private let process: Process
    private let directory: URL
    let port: Int
    var pid: Int32 { process.processIdentifier }

    /// Starts it (`binary`, or this process's own) and waits (at most 60 s) until it says
    /// where it listens.
    static func start(binary: String? = nil, arguments: [String]) throws -> ServeProcess {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-bench-serve-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let output = directory.appendingPathComponent("stdout")
        let errors = directory.appendingPathComponent("stderr")
        guard FileManager.default.createFile(atPath: output.path, contents: nil), FileManager.default.createFile(atPath: errors.path, contents: nil)
        else { throw UserFacingMessage("cannot write in \(directory.path)") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try binary ?? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_LOG_LEVEL"] = environment["HERALD_LOG_LEVEL"] ?? "warning"
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, process.isRunning {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("http://") }),
                let port = URL(string: String(line))?.port
            {
                return ServeProcess(process: process, directory: directory, port: port)
            }
            usleep(50_000)
        }
        let said = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        if process.isRunning { process.terminate() }
        try? FileManager.default.removeItem(at: directory)
        throw UserFacingMessage("herald serve did not start within 60 s: \(said.split(separator: "\n").last ?? "")")
    }

    /// SIGTERM, and waits (at most 30 s, then SIGKILL) for it to end. Foundation's
    /// `waitUntilExit` spins a core off the main thread: this polls instead.
    func stop() {
        if process.isRunning {
            process.terminate()
            let deadline = Date().addingTimeInterval(30)
            while process.isRunning, Date() < deadline { usleep(50_000) }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                let said = (try? String(contentsOf: directory.appendingPathComponent("stderr"), encoding: .utf8)) ?? ""
                FileHandle.standardError.write(
                    Data("herald serve did not stop within 30 s of SIGTERM: killed. Its last words: \(said.suffix(2_000))\n".utf8))
            }
        }
        try? FileManager.default.removeItem(at: directory)
    }
}
