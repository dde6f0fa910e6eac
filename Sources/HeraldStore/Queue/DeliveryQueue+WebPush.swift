import HeraldCore

extension DeliveryQueue {
    /// A Web Push device's subscription, as stored (checked when it was registered); nil for
    /// other devices, and for keys that no longer read (sent as a bad request, never as garbage).
    /// Both claims read it: the queue's and fan-out's own.
    static func subscription(endpoint: String, p256dh: String?, auth: String?) -> WebPushSubscription? {
        guard let p256dh = p256dh.flatMap(Base64URL.decode), let auth = auth.flatMap(Base64URL.decode) else { return nil }
        return WebPushSubscription(stored: endpoint, p256dh: p256dh, auth: auth)
    }
}
