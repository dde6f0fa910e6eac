import ArgumentParser
import Foundation
import HeraldCore
import HeraldStore

struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "Register, remove and list push tokens.",
        subcommands: [Register.self, Remove.self, List.self])

    struct Register: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register a push token or FCM installation id (again: refresh it; from another person: move it to this one).",
            discussion: """
                Give --token (the registration token the app obtained) or --fid (the Firebase Installation ID an app on \
                the newest Firebase SDKs reports instead; FCM only). Apps should register again about monthly: a device \
                not registered for HERALD_DEVICE_STALE_AFTER (60d) is stale and sent nothing until it registers again. \
                --kind liveactivity registers an iPhone's ActivityKit push-to-start token (with --platform ios --provider \
                apns): a P0 activity assigned to or by its owner starts a Live Activity on it. A browser registers its \
                Web Push subscription instead of a token: --platform web --provider webpush --subscription JSON, the \
                PushSubscription the page's pushManager.subscribe() returned, as JSON.stringify writes it.
                """)

        @Option(help: "The owner's email.") var user: String
        @Option(help: "The push token the app obtained.") var token: String?
        @Option(help: "The FCM installation id (fid) the app obtained, instead of a token.") var fid: String?
        @Option(help: "member or manager.") var app: String
        @Option(help: "ios, android or web.") var platform: String
        @Option(help: "fcm, apns or webpush (default fcm).") var provider = "fcm"
        @Option(help: "A browser's subscription, as JSON: {\"endpoint\": URL, \"keys\": {\"p256dh\": …, \"auth\": …}}.")
        var subscription: String?
        @Option(help: "alert (default) or liveactivity (a push-to-start token).") var kind: String?
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let app = try Input.choice(app, field: "app", as: AppKind.self)
            let platform = try Input.devicePlatform(platform)
            let provider = try Input.deviceProvider(provider)
            let subscription = try self.subscription.map(Self.subscription)
            let (value, address) = try subscription.map { ($0.endpoint, DeviceAddress.token) } ?? Input.deviceAddress(token: token, fid: fid)
            let kind = try Input.deviceKind(kind, platform: platform, provider: provider, address: address)
            let (device, outcome) = try await withTenant(tenant) {
                try await $0.registerDevice(
                    email: user, token: value, address: address, app: app, platform: platform, provider: provider, kind: kind,
                    subscription: subscription)
            }
            if options.json { return try printJSON(device) }
            let what =
                switch outcome {
                case .registered: "registered"
                case .refreshed: "refreshed"
                case .restored: "registered again after logout"
                case .moved(let previous): "moved from \(previous.email)"
                }
            let purpose = device.kind == .alert ? "" : " Live Activity push-to-start"
            print(
                "\(what)\(purpose): \(device.address == .fid ? "fid " : "")\(device.tokenPreview) for \(device.owner.email) (\(device.app.rawValue) app, \(device.platform.rawValue), \(device.provider.rawValue)), id \(device.id.text)"
            )
        }

        /// `--subscription`, read as the API reads its `subscription` (the endpoint checked
        /// against `HERALD_WEBPUSH_ALLOW_HTTP` and `HERALD_WEBPUSH_ALLOW_PRIVATE`).
        static func subscription(_ json: String) throws -> WebPushSubscription {
            guard let given = try? JSONDecoder().decode(WebPushSubscription.Given.self, from: Data(json.utf8)) else {
                throw InputError("--subscription is a JSON object {\"endpoint\": URL, \"keys\": {\"p256dh\": …, \"auth\": …}}")
            }
            return try WebPushSubscription(given, policy: try DestinationPolicy(.webPush, environment: ProcessInfo.processInfo.environment))
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Log a token (or an installation id) out: it gets nothing until registered again.")

        @Option(help: "The push token.") var token: String?
        @Option(help: "The FCM installation id, instead of a token.") var fid: String?
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let (value, _) = try Input.deviceAddress(token: token, fid: fid)
            let removed = try await withTenant(tenant) { try await $0.removeDevice(token: value, viewer: AccessPolicy(nil)) }
            if options.json { return try printJSON(removed) }
            for device in removed { print("removed \(device.tokenPreview) of \(device.owner.email) (\(device.app.rawValue) app)") }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List devices, active and retired (tokens truncated).")

        @Option(help: "Only this person's devices.") var user: String?
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let devices = try await withTenant(tenant) { try await $0.devices(viewer: AccessPolicy(nil), email: user) }
            if options.json { return try printJSON(devices) }
            var table = TextTable("OWNER", "TOKEN OR FID", "KIND", "APP", "PLATFORM", "PROVIDER", "STATE", "LAST SEEN")
            for device in devices {
                var state = device.state
                if let reason = device.deactivationReason { state += " (\(reason))" }
                table.add(
                    device.owner.email, (device.address == .fid ? "fid " : "") + device.tokenPreview, Self.kind(device), device.app.rawValue,
                    device.platform.rawValue,
                    device.provider.rawValue, state, device.lastSeenAt.shortDisplay)
            }
            print(table.render(empty: "no devices (herald device register)"))
        }

        /// `alert`, `liveactivity`, or the update token's activity (`update 0193a1b2`).
        static func kind(_ device: Device) -> String {
            guard let activity = device.activityID else { return device.kind.rawValue }
            return "update " + activity.lowercasedString.prefix(8)
        }
    }
}
