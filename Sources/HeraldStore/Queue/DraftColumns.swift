import Foundation
import HeraldCore

/// Fan-out's drafts as the columns its write binds: what the recipients of one event have in
/// common (the event, the words, the data) once per distinct content, and per recipient only
/// what differs. Bound as twenty arrays of one element per recipient, a group message's part
/// of 1,000 cost PostgreSQL about 20 ms just to parse them (the title, body and data, a few
/// hundred bytes, repeated 1,000 times).
struct DraftColumns {
    /// What a draft shares with the others of its event and language.
    struct Shared: Hashable {
        let eventID: UUID
        /// The notification's kind: the event's name, or `digest`.
        let kind: String
        let teamID: UUID?
        let activityID: UUID?
        let conversationID: UUID?
        let title: String
        let body: String
        /// `data` as a JSON object, keys sorted.
        let data: String
        let sound: Bool
        let threadID: String
        let imageURL: String?
        let eventAt: Date
    }

    /// The distinct contents, in the order of their first draft.
    private(set) var shared: [Shared] = []
    /// For each draft, its content's position in `shared`, counted from 1 (as
    /// `WITH ORDINALITY` counts).
    private(set) var content: [Int] = []

    init(_ drafts: [NotificationDraft]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // A group's drafts carry the same data: encoded once, not per recipient
        // (JSONEncoder was a tenth of a group message's fan-out, measured with `perf`).
        var texts: [PushPayload: String] = [:]
        var positions: [Shared: Int] = [:]
        // A draft is most often like the one before it (a group's, in one language): compared
        // first with that one, where equal strings and dictionaries that share their storage
        // compare at once, it is not hashed (hashing each draft's words and data twice was
        // the largest piece of the worker's CPU in building a part's statement, `perf`).
        var last: (data: PushPayload, text: String, entry: Shared, position: Int)?
        content.reserveCapacity(drafts.count)
        for draft in drafts {
            let data: String
            if let last, last.data == draft.content.data {
                data = last.text
            } else if let text = texts[draft.content.data] {
                data = text
            } else {
                data = String(decoding: try encoder.encode(draft.content.data), as: UTF8.self)
                texts[draft.content.data] = data
            }
            let entry = Shared(
                eventID: draft.eventID, kind: draft.kindName, teamID: draft.teamID, activityID: draft.activityID,
                conversationID: draft.conversationID, title: draft.content.title, body: draft.content.body, data: data,
                sound: draft.content.sound, threadID: draft.content.threadID, imageURL: draft.content.imageURL,
                eventAt: draft.eventAt)
            let position: Int
            if let last, last.entry == entry {
                position = last.position
            } else if let known = positions[entry] {
                position = known
            } else {
                shared.append(entry)
                position = shared.count
                positions[entry] = position
            }
            content.append(position)
            last = (draft.content.data, data, entry, position)
        }
    }
}
