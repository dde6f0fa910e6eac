import ArgumentParser
import Foundation
import HeraldCore
import HeraldDispatch
import HeraldHTTP
import HeraldPush
import HeraldRuntime
import HeraldTemplates

struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push", abstract: "Talk to the push providers directly.", subcommands: [Test.self])

    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Send one notification through FCM, APNs or Web Push and print the provider's answer (the first thing to run with new credentials).",
            discussion: """
                FCM uses GOOGLE_APPLICATION_CREDENTIALS and HERALD_FCM_ENDPOINT (default https://fcm.googleapis.com); APNs \
                uses HERALD_APNS_KEY_FILE, HERALD_APNS_KEY_ID, HERALD_APNS_TEAM_ID, HERALD_APNS_TOPIC_MEMBER, \
                HERALD_APNS_TOPIC_MANAGER and HERALD_APNS_ENDPOINT; Web Push (--provider webpush --subscription JSON, a \
                browser's subscription) uses HERALD_WEBPUSH_KEY_FILE and HERALD_WEBPUSH_SUBJECT. HERALD_CA_FILE adds trusted \
                CAs (e.g. the emulator's). Exits 0 only when the message was accepted.
                """)

        @Option(help: "The device token to send to.") var token: String?
        @Option(help: "The FCM installation id to send to, instead of a token.") var fid: String?
        @Option(help: "member or manager: the app (for APNs, which topic).") var app = "member"
        @Option(help: "fcm, apns or webpush.") var provider = "fcm"
        @Option(help: "Web Push: the browser's subscription, as JSON (instead of a token).") var subscription: String?
        @Option(help: "Notification title.") var title = "Herald test"
        @Option(help: "Notification body.") var body = "If you can read this, Herald reaches this device."
        @OptionGroup var options: GlobalOptions

        struct Output: Encodable {
            let outcome: String
            let detail: String?
            let httpStatus: Int?
            let token: String
            let provider: String
        }

        func run() async throws {
            let app = try Input.choice(app, field: "app", as: AppKind.self)
            let provider = try Input.deviceProvider(provider)
            let subscription = try self.subscription.map(DeviceCommand.Register.subscription)
            guard (subscription != nil) == provider.takesSubscription else {
                throw InputError("--subscription goes with --provider webpush, and webpush needs it")
            }
            let (value, address) = try subscription.map { ($0.endpoint, DeviceAddress.token) } ?? Input.deviceAddress(token: token, fid: fid)
            let token = try Input.deviceAddress(value, address, provider: provider)
            let message = RenderedMessage(title: try Input.name(title, field: "title"), body: try Input.text(body, field: "body"))
            var notification = PushNotification(
                token: token, message: message, data: ["type": "test", "app": app.rawValue], badge: 0, sound: true, threadID: "herald-test")
            notification.address = address
            notification.subscription = subscription
            let answer = try await heraldEnvironment().withGateway(maxInFlight: 4) { gateway in
                // A broken credential is one clear line, not an outcome.
                if let error = gateway.configurationError(for: provider) { throw error }
                return try await gateway.send(notification, provider: provider, app: app, expiration: nil)
            }
            let outcome = answer.outcome
            let (name, detail): (String, String?) =
                switch outcome {
                case .delivered(let id): ("delivered", id)
                case .retry(let after, let reason): ("retry later", reason + (after.map { " (Retry-After \($0))" } ?? ""))
                case .unanswered(let reason): ("no answer", reason)
                case .deadToken(let reason): ("dead token", reason)
                case .badRequest(let reason): ("bad request", reason)
                case .credentialsExpired(let reason): ("credentials expired", reason)
                case .configurationError(let reason): ("configuration error", reason)
                }
            let output = Output(
                outcome: name, detail: detail, httpStatus: answer.httpStatus, token: TokenDisplay.preview(token, provider: provider),
                provider: provider.rawValue)
            if options.json {
                try printJSON(output)
            } else {
                printFields([
                    ("outcome", name), ("detail", detail ?? "-"), ("http status", answer.httpStatus.map(String.init) ?? "-"),
                    ("token", output.token), ("provider", output.provider)
                ])
            }
            if case .delivered = outcome { return }
            throw ExitCode(2)
        }
    }
}

extension PushConfigurationError: UserFacingError {}
extension HTTPClientError: UserFacingError {}
