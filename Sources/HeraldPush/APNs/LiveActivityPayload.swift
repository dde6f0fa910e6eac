import Foundation
import HeraldCore

/// The `aps` of an ActivityKit push (docs/apps.md): `event`, `timestamp`, `content-state`, for a
/// start `attributes-type`, `attributes` and the alert, the stale and dismissal dates; keys sorted.
enum LiveActivityPayload {
    /// The topic of a Live Activity's pushes: the app's bundle id and this suffix.
    static let topicSuffix = ".push-type.liveactivity"

    static func write(_ live: LiveActivityContent, title: String, body: String, into json: inout JSONText) {
        json.openObject("aps")
        if live.event == .start {
            json.openObject("alert")
            json.string("body", body)
            json.string("title", title)
            json.closeObject()
        }
        if let attributes = live.attributes {
            json.openObject("attributes")
            json.string("activityId", attributes.activityId)
            json.string("name", attributes.name)
            json.string("team", attributes.team)
            json.closeObject()
            json.string("attributes-type", LiveActivityContent.attributesType)
        }
        json.openObject("content-state")
        json.string("assignee", live.contentState.assignee)
        json.string("deadline", live.contentState.deadline)
        json.string("status", live.contentState.status)
        if let since = live.contentState.waitingSince { json.integer("waitingSince", Int(since)) }
        json.closeObject()
        if let dismissal = live.dismissalDate { json.integer("dismissal-date", Int(dismissal)) }
        json.string("event", live.event.rawValue)
        if let stale = live.staleDate { json.integer("stale-date", Int(stale)) }
        json.integer("timestamp", Int(live.timestamp))
        json.closeObject()
    }
}
