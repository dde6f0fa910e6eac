import ArgumentParser
import Foundation
import HeraldCore
import HeraldStore

@main
struct Herald: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Multi-tenant team workflow notifier: activities and chat, delivered over FCM, APNs and Web Push.",
        discussion: """
            With no HERALD_DATABASE_URL, herald runs a private PostgreSQL cluster under HERALD_HOME \
            (default ~/.herald), started on demand.
            """,
        version: HeraldVersion.number,
        subcommands: [
            VersionCommand.self, DemoCommand.self, DatabaseCommand.self, TenantCommand.self, TeamCommand.self, UserCommand.self,
            DeviceCommand.self, TokenCommand.self, KeyCommand.self, ServeCommand.self, ActivityCommand.self, ChatCommand.self, TemplateCommand.self,
            PolicyCommand.self, PrefsCommand.self, WebhookCommand.self, WorkerCommand.self, DispatchCommand.self, HistoryCommand.self,
            WhyCommand.self, StatsCommand.self,
            WebPushCommand.self, EmulatorCommand.self, PushCommand.self, BenchCommand.self
        ]
    )

    /// Parses, sets up logging, runs, and turns any failure into one line on stderr.
    static func main() async {
        do {
            var command = try parseAsRoot()
            try HeraldLogging.bootstrap(environment: ProcessInfo.processInfo.environment)
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(reporting: error)
        }
    }

    private static func exit(reporting error: any Error) -> Never {
        if let failure = error as? any UserFacingError {
            FileHandle.standardError.write(Data("herald: \(TerminalText.escaped(failure.userMessage, .singleLine))\n".utf8))
            Foundation.exit(failure.exitCode)
        }
        // The database's own refusals are one line already.
        if let message = Store.databaseFailure(error) {
            FileHandle.standardError.write(Data("herald: \(TerminalText.escaped(message, .singleLine))\n".utf8))
            Foundation.exit(1)
        }
        // A command that printed its outcome and chose its exit status (push test: 2).
        if let exit = error as? ExitCode { Foundation.exit(exit.rawValue) }
        // --help and --version print what was asked for and succeed.
        let code = Herald.exitCode(for: error)
        if code == .success { Herald.exit(withError: error) }
        // Anything else is one line, like every other refusal: no usage dump.
        let message = Herald.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
        FileHandle.standardError.write(Data("herald: \(TerminalText.escaped(message, .singleLine)) (see --help)\n".utf8))
        Foundation.exit(code.rawValue)
    }
}
