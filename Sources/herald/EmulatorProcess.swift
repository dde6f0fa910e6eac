import Foundation

/// `herald emulator` as a child process of this one, on free ports, with a home of its own
/// (so it leaves a user's running emulator and its files alone): a bench that measures its
/// own CPU must not share its process with the emulator's.
struct EmulatorProcess {
    private let process: Process
    /// The write end stays open in this process for as long as it lives.
    private let input: Pipe
    private let home: URL
    /// The variables that point Herald at it (`GOOGLE_APPLICATION_CREDENTIALS`,
    /// `HERALD_FCM_ENDPOINT`, `HERALD_CA_FILE`).
    let variables: [String: String]
    /// Its HTTP/1.1 base URL (`http://127.0.0.1:PORT`), from the line that says where it listens.
    let http1: String?

    /// Starts the emulator and waits (at most 30 s) until it says where it listens.
    static func start() throws -> EmulatorProcess {
        let temporary = FileManager.default.temporaryDirectory
        removeAbandonedHomes(in: temporary)
        let home = temporary.appendingPathComponent("\(homePrefix)\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let output = home.appendingPathComponent("stdout")
        guard FileManager.default.createFile(atPath: output.path, contents: nil) else {
            throw UserFacingMessage("cannot write \(output.path)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        // It reads a pipe only this process holds: should this process be killed outright,
        // the pipe closes and the emulator stops (Ctrl-C reaches both anyway).
        process.arguments = ["emulator", "--port", "0", "--h2c-port", "0", "--http1-port", "0", "--stop-at-end-of-input"]
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_HOME"] = home.path
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        let input = Pipe()
        process.standardInput = input
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, process.isRunning {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("export ") }) {
                var variables: [String: String] = [:]
                for assignment in line.dropFirst("export ".count).split(separator: " ") {
                    let parts = assignment.split(separator: "=", maxSplits: 1)
                    if parts.count == 2 { variables[String(parts[0])] = String(parts[1]) }
                }
                let listening = text.split(separator: "\n").first { $0.contains("HTTP/1.1 http://") }
                let http1 = listening.flatMap { $0.split(separator: " ").last }.map(String.init)
                return EmulatorProcess(process: process, input: input, home: home, variables: variables, http1: http1)
            }
            usleep(50_000)
        }
        if process.isRunning { process.terminate() }
        try? FileManager.default.removeItem(at: home)
        throw UserFacingMessage("the bench's emulator did not start within 30 s")
    }

    static let homePrefix = "herald-bench-emulator-"

    /// Removes the homes of bench emulators whose bench is gone: a bench killed outright
    /// cannot remove its own. Each name carries its bench's process id; a home whose
    /// process still runs (or cannot be asked about) is left alone.
    static func removeAbandonedHomes(in directory: URL) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] where name.hasPrefix(homePrefix) {
            guard let bench = Int32(name.dropFirst(homePrefix.count).prefix { $0 != "-" }), bench > 0,
                kill(bench, 0) == -1, errno == ESRCH
            else { continue }
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
    }

    /// Stops it (SIGTERM) and removes its home.
    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: home)
    }
}
