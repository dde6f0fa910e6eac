import Foundation

/// What the emulator's APNs refuses in a request's headers and `aps`, beyond its token and
/// signature: an unknown push type or priority, as APNs does, and a Live Activity push that
/// is not one (docs/apps.md). APNs itself accepts a malformed ActivityKit payload and the phone
/// drops it without a word; the emulator refuses it, so that a test sees it.
enum APNsRequestCheck {
    /// Apple's push types.
    static let pushTypes: Set<String> = [
        "alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity", "pushtotalk", "widgets"
    ]

    /// The reason for refusing the request, nil when it is accepted.
    static func refusal(pushType: String, priority: String?, topic: String, aps: [String: Any]) -> String? {
        guard pushTypes.contains(pushType) else { return "InvalidPushType" }
        if let priority, !["1", "5", "10"].contains(priority) { return "BadPriority" }
        let liveTopic = topic.hasSuffix(".push-type.liveactivity")
        guard pushType == "liveactivity" else { return liveTopic ? "TopicDisallowed" : nil }
        guard liveTopic else { return "TopicDisallowed" }
        if let priority, priority != "5", priority != "10" { return "BadPriority" }
        return liveActivityProblem(aps).map { "BadLiveActivityPayload: \($0)" }
    }

    /// What is wrong with an ActivityKit `aps`, if anything.
    static func liveActivityProblem(_ aps: [String: Any]) -> String? {
        guard let event = aps["event"] as? String, ["start", "update", "end"].contains(event) else {
            return "event must be start, update or end"
        }
        guard isInteger(aps["timestamp"]) else { return "timestamp must be Unix seconds" }
        for key in ["stale-date", "dismissal-date"] where aps[key] != nil && !isInteger(aps[key]) {
            return "\(key) must be Unix seconds"
        }
        if event != "end", !(aps["content-state"] is [String: Any]) { return "\(event) needs a content-state object" }
        if event == "start" {
            guard aps["attributes-type"] is String, aps["attributes"] is [String: Any] else {
                return "start needs attributes-type and attributes"
            }
            guard aps["alert"] != nil else { return "start needs an alert" }
        } else if aps["attributes"] != nil || aps["attributes-type"] != nil {
            return "only start carries attributes"
        }
        if event != "end", aps["dismissal-date"] != nil { return "only end carries a dismissal-date" }
        return nil
    }

    private static func isInteger(_ value: Any?) -> Bool {
        // JSONSerialization gives numbers and booleans alike as NSNumber; a boolean's type
        // says `c` (char).
        guard let number = value as? NSNumber, String(cString: number.objCType) != "c" else { return false }
        return number.doubleValue == number.doubleValue.rounded()
    }
}
