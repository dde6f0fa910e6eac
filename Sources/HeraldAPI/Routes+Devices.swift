import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird

extension HeraldAPI {
    /// `POST /v1/devices`.
    struct DeviceBody: Decodable, FieldNamed {
        static let fieldNames: Set<String> = ["token", "fid", "app", "platform", "provider", "kind", "subscription"]

        /// Exactly one of the two: the registration token, or the FCM installation id.
        let token: String?
        let fid: String?
        let app: String
        let platform: String
        let provider: String?
        /// `alert` (the default) or `liveactivity`: an iPhone's push-to-start token.
        let kind: String?
        /// Provider `webpush`: the browser's subscription, instead of a token.
        let subscription: WebPushSubscription.Given?
    }

    /// Devices are their owner's: a person lists, registers and removes their own; an admin
    /// (or a tenant key) lists anyone's with `?user=EMAIL`, or every device. Who may is the
    /// store's to say (`AccessPolicy.maySeePerson`): someone else's is not found.
    func addDevices(to group: RouterGroup<APIContext>) {
        group.get("devices") { request, context in
            let caller = try context.requireCaller()
            let user = request.uri.queryParameters.get("user")
            let devices = try await store.withTenant(caller.tenant) { try await $0.devices(viewer: caller.policy, email: user) }
            return try JSONBody.response(["items": devices])
        }

        group.post("devices") { request, context in
            try await creating(request, context) { caller, bytes in
                let actor = try caller.actor()
                let body = try JSONBody.decode(DeviceBody.self, bytes: bytes, request: request)
                let app = try field("app") { try Input.choice(body.app, field: "app", as: AppKind.self) }
                let platform = try field("platform") { try Input.devicePlatform(body.platform) }
                let provider = try field("provider") { try Input.deviceProvider(body.provider ?? "fcm") }
                let subscription = try body.subscription.map { try WebPushSubscription($0, policy: webPush.policy) }
                let (value, address) =
                    try subscription.map { ($0.endpoint, DeviceAddress.token) }
                    ?? field("token") { try Input.deviceAddress(token: body.token, fid: body.fid) }
                let token = try field(address.rawValue) { try Input.deviceAddress(value, address, provider: provider) }
                let kind = try field("kind") { try Input.deviceKind(body.kind, platform: platform, provider: provider, address: address) }
                let (device, outcome) = try await store.withTenant(caller.tenant) {
                    try await $0.registerDevice(
                        email: actor.email, token: token, address: address, app: app, platform: platform, provider: provider, kind: kind,
                        subscription: subscription)
                }
                let created = outcome == .registered
                return try JSONBody.answer(
                    device, status: created ? .created : .ok, headers: created ? [.location: "/v1/devices/\(pathSegment(token))"] : [:])
            }
        }

        // The key pages pass to `pushManager.subscribe()` as `applicationServerKey`.
        group.get("webpush/key") { _, context in
            _ = try context.requireCaller()
            guard let key = webPush.publicKey else {
                throw Problem(
                    .notFound, "Web Push is not configured",
                    detail: webPush.problem ?? "this server has no Web Push key: set HERALD_WEBPUSH_KEY_FILE and HERALD_WEBPUSH_SUBJECT")
            }
            return try JSONBody.response(["publicKey": key])
        }

        group.delete("devices/:token") { _, context in
            let caller = try context.requireCaller()
            // A Web Push device's token is its endpoint, a URL (its `Location` encodes it as one
            // segment); FCM and APNs tokens have no `%` to decode.
            let token = try context.parameters.decoded("token")
            try await store.withTenant(caller.tenant) { _ = try await $0.removeDevice(token: token, viewer: caller.policy) }
            return Response(status: .noContent)
        }
    }
}
