import HeraldCore
import HeraldTemplates

/// A push made to fit its provider by construction (docs/apps.md#what-a-push-holds): measured
/// in bytes of the final request (FCM's whole request and APNs' payload 4,096, Web Push's
/// plaintext 3,993 before encryption), and shortened in a fixed order until it fits:
/// 1. what the app can fetch goes by reference: a digest's `notificationIds` are left out (its
///    `digestId` finds them: `GET /v1/history?digest=ID`);
/// 2. the body, then the title, each cut on character boundaries and ended with `...`
///    (`TextShortening.shorten`: the longest prefix that fits);
/// 3. the image, last.
/// Whatever a user may write into a push (a message, a name, a group's name) is bounded by
/// its input rules, so the words alone always fit (tests at each limit with the worst characters).
enum PayloadFit {
    /// `notification` as it fits `limit` bytes of what `encode` writes, and those bytes.
    static func fit(
        _ notification: PushNotification, limit: Int, encode: (PushNotification) -> [UInt8]
    ) -> (notification: PushNotification, bytes: [UInt8]) {
        var fitted = notification
        var bytes = encode(fitted)
        guard bytes.count > limit else { return (fitted, bytes) }
        let byReference = PushPayload.Field.byReference
        if byReference.contains(where: { fitted.data[$0] != nil }) {
            for key in byReference { fitted.data[key] = nil }
            bytes = encode(fitted)
            guard bytes.count > limit else { return (fitted, bytes) }
        }
        let words: [WritableKeyPath<NotificationContent, String>] = [\.body, \.title]
        for field in words {
            var candidate = fitted
            let shortened = TextShortening.shorten(fitted.content[keyPath: field]) { text in
                candidate.content[keyPath: field] = text
                return encode(candidate).count <= limit
            }
            fitted.content[keyPath: field] = shortened
            bytes = encode(fitted)
            guard bytes.count > limit else { return (fitted, bytes) }
        }
        if fitted.imageURL != nil {
            fitted.imageURL = nil
            bytes = encode(fitted)
        }
        return (fitted, bytes)
    }
}
