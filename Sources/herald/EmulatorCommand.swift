import ArgumentParser
import Foundation
import HeraldCore
import HeraldEmulator
import HeraldHTTP
import HeraldRuntime
import HeraldStore
import Logging

struct EmulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emulator",
        abstract: "Run a local stand-in for FCM, Google OAuth and APNs (for the demo, tests and benchmarks).",
        discussion: """
            Listens on loopback: HTTPS (HTTP/2 by ALPN, with a certificate authority made at start) on --port, h2c \
            (HTTP/2 with prior knowledge) on --h2c-port and HTTP/1.1 on --http1-port. Writes a development service \
            account (HERALD_HOME/emulator/service-account.json) pointing at itself and its CA (HERALD_HOME/emulator/ca.pem), \
            and prints the variables that make herald use it. Runs until SIGTERM or Ctrl-C.
            """,
        subcommands: [Run.self, Messages.self],
        defaultSubcommand: Run.self)

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "run", abstract: "Run the emulator (the default).")

        @Option(help: "HTTPS (HTTP/2 over TLS) port (0: any free port).") var port = 8787
        @Option(name: .customLong("h2c-port"), help: "h2c port (0: any free port).") var h2cPort = 8788
        @Option(name: .customLong("http1-port"), help: "HTTP/1.1 port (0: any free port).") var http1Port = 8789
        @Option(name: .customLong("project"), help: "FCM project id.") var projectID = "herald-dev"
        @Option(name: .customLong("dead-prefix"), help: "Tokens starting with this are UNREGISTERED.") var deadPrefix = "dead-"
        @Option(name: .customLong("unavailable"), help: "Share of sends answered 503 (0 to 1).") var unavailable = 0.0
        @Option(name: .customLong("throttled"), help: "Share of sends answered 429 (0 to 1).") var throttled = 0.0
        @Option(name: .customLong("retry-after"), help: "Seconds in Retry-After on injected failures.") var retryAfter = 1
        @Option(name: .customLong("latency-ms"), help: "Milliseconds added to every send.") var latency = 0
        @Flag(name: .customLong("stop-at-end-of-input"), help: "Stop when standard input closes (as when the process that started it ends).")
        var stopAtEndOfInput = false

        func validate() throws {
            guard (0...1).contains(unavailable), (0...1).contains(throttled), unavailable + throttled <= 1 else {
                throw ValidationError("--unavailable and --throttled are shares between 0 and 1 that add up to at most 1")
            }
            guard latency >= 0, retryAfter >= 0 else { throw ValidationError("--latency-ms and --retry-after must not be negative") }
            for (name, value) in [("--port", port), ("--h2c-port", h2cPort), ("--http1-port", http1Port)] where !(0...65_535).contains(value) {
                throw ValidationError("\(name) \(value) is not a TCP port (0-65535; 0 picks a free one)")
            }
        }

        func run() async throws {
            let logger = HeraldLogging.logger
            if stopAtEndOfInput {
                // A blocking read on a thread of its own; at end of input, the same stop as SIGTERM.
                Thread.detachNewThread {
                    _ = FileHandle.standardInput.readDataToEndOfFile()
                    kill(getpid(), SIGTERM)
                }
            }
            let faults = EmulatorConfiguration.Faults(
                deadTokenPrefix: deadPrefix.isEmpty ? nil : deadPrefix, unavailableShare: unavailable, throttledShare: throttled,
                retryAfterSeconds: retryAfter, latency: .milliseconds(latency))
            let emulator = try Emulator(
                configuration: .init(httpsPort: port, http2Port: h2cPort, http1Port: http1Port, projectID: projectID, faults: faults),
                logger: logger)
            let home = DatabaseSource.heraldHome(ProcessInfo.processInfo.environment).appendingPathComponent("emulator")
            try await emulator.run { endpoints in
                do {
                    try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                    let file = home.appendingPathComponent("service-account.json")
                    try emulator.serviceAccountJSON(tokenURI: endpoints.https + "/token").write(to: file, options: .atomic)
                    chmod(file.path, 0o600)
                    let ca = home.appendingPathComponent("ca.pem")
                    try emulator.certificates.caPEM.write(to: ca, atomically: true, encoding: .utf8)
                    let lines = [
                        "emulator listening: HTTPS \(endpoints.https), h2c \(endpoints.http2), HTTP/1.1 \(endpoints.http1)",
                        "export GOOGLE_APPLICATION_CREDENTIALS=\(file.path) HERALD_FCM_ENDPOINT=\(endpoints.https) HERALD_CA_FILE=\(ca.path)"
                    ]
                    FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
                } catch {
                    logger.error("cannot write the service account", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    struct Messages: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List (or --clear) the messages a running emulator accepted.")

        @Option(help: "The emulator's base URL (an https:// one is checked against HERALD_CA_FILE).") var url = "http://127.0.0.1:8788"
        @Flag(help: "Forget the recorded messages.") var clear = false
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let caFile = ProcessInfo.processInfo.environment["HERALD_CA_FILE"].flatMap { $0.isEmpty ? nil : $0 }
            let http = try HTTPClient(configuration: .init(maxInFlight: 2, extraCAFile: caFile), logger: HeraldLogging.logger)
            defer { http.shutdown() }
            let response: HTTPResponse
            do {
                response = try await http.send(HTTPRequest(method: clear ? "DELETE" : "GET", url: url + "/emulator/messages", timeout: .seconds(10)))
            } catch let error as HTTPClientError {
                throw ValidationError("no emulator answers at \(url) (\(error.message)); start one with herald emulator")
            }
            let data = Data(response.body)
            if clear { return print("cleared") }
            let messages = try JSONDecoder.emulator.decode([RecordedMessage].self, from: data)
            // Tokens are shown truncated here too, the payload's copy included.
            if options.json { return try printJSON(messages.map { $0.redactingToken(TokenDisplay.truncated) }) }
            var table = TextTable("RECEIVED", "PROVIDER", "TOKEN", "TITLE", "BODY")
            for message in messages {
                table.add(
                    message.receivedAt.shortDisplay, message.provider, TokenDisplay.truncated(message.token), message.title ?? "", message.body ?? "")
            }
            print(table.render(empty: "no messages yet"))
        }
    }
}
