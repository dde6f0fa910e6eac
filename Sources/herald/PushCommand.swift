import ArgumentParser
import Foundation
import HeraldCore
import HeraldHTTP
import HeraldPush
import HeraldTemplates

struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push", abstract: "Talk to the push providers directly.", subcommands: [Test.self])

    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send one notification through FCM and print the provider's answer (the first thing to run with new credentials).",
            discussion: """
                Uses GOOGLE_APPLICATION_CREDENTIALS, HERALD_FCM_ENDPOINT (default https://fcm.googleapis.com) and \
                HERALD_CA_FILE (extra trusted CAs, e.g. the emulator's). Exits 0 only when the message was accepted.
                """)

        @Option(help: "The device token to send to.") var token: String
        @Option(help: "member or manager (goes into the data as app).") var app = "member"
        @Option(help: "Notification title.") var title = "Herald test"
        @Option(help: "Notification body.") var body = "If you can read this, Herald reaches this device."
        @OptionGroup var options: GlobalOptions

        struct Output: Encodable {
            let outcome: String
            let detail: String?
            let token: String
            let endpoint: String
        }

        func run() async throws {
            let environment = ProcessInfo.processInfo.environment
            let token = try Input.token(token)
            let app = try Input.choice(app, field: "app", as: AppKind.self)
            guard let path = environment["GOOGLE_APPLICATION_CREDENTIALS"], !path.isEmpty else {
                throw PushConfigurationError("GOOGLE_APPLICATION_CREDENTIALS is not set; point it at the FCM service account JSON")
            }
            let account = try ServiceAccount.load(path: path)
            let endpoint = environment["HERALD_FCM_ENDPOINT"].flatMap { $0.isEmpty ? nil : $0 } ?? "https://fcm.googleapis.com"
            let caFile = environment["HERALD_CA_FILE"].flatMap { $0.isEmpty ? nil : $0 }
            let http = try HTTPClient(configuration: .init(maxInFlight: 4, extraCAFile: caFile), logger: HeraldLogging.logger)
            defer { http.shutdown() }
            let provider = FCMProvider(account: account, endpoint: endpoint, http: http)
            let message = RenderedMessage(title: try Input.name(title, field: "title"), body: try Input.text(body, field: "body"))
            let notification = PushNotification(
                token: token, message: message, data: ["type": "test", "app": app.rawValue], badge: 0, sound: true, threadID: "herald-test")
            let outcome = try await provider.send(notification)
            let (name, detail): (String, String?) = switch outcome {
            case .delivered(let id): ("delivered", id)
            case .retry(let after, let reason): ("retry later", reason + (after.map { " (Retry-After \($0))" } ?? ""))
            case .deadToken(let reason): ("dead token", reason)
            case .badRequest(let reason): ("bad request", reason)
            case .credentialsExpired(let reason): ("credentials expired", reason)
            case .configurationError(let reason): ("configuration error", reason)
            }
            let output = Output(outcome: name, detail: detail, token: TokenDisplay.truncated(token), endpoint: provider.sendURL)
            if options.json {
                try printJSON(output)
            } else {
                printFields([("outcome", name), ("detail", detail ?? "-"), ("token", output.token), ("endpoint", output.endpoint)])
            }
            if case .delivered = outcome { return }
            throw ExitCode(2)
        }
    }
}

extension PushConfigurationError: UserFacingError {}
extension HTTPClientError: UserFacingError {}
