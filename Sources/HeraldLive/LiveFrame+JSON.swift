import Foundation
import HeraldCore

// The frames sent most, by hand (see `JSONWritable`): a reconnect storm writes some 90
// presence entries an arrival, and building each frame's tree for `HeraldJSONEncoder` was a
// tenth of the server's CPU. Keys in sorted order, as the encoder writes them.

extension LiveFrame.Presence: JSONWritable {
    func write(to writer: inout JSONWriter) {
        writer.raw(#"{"people":["#)
        for (index, entry) in people.enumerated() {
            if index > 0 { writer.raw(",") }
            entry.write(to: &writer)
        }
        writer.raw(#"],"type":"presence"}"#)
    }
}

extension LiveFrame.PresenceEntry: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.raw(#"{"lastSeen":"#)
        if let lastSeen { writer.date(lastSeen) } else { writer.raw("null") }
        writer.raw(#","online":"#)
        writer.raw(online ? "true" : "false")
        writer.raw(#","person":"#)
        writer.string(person)
        writer.raw("}")
    }
}

extension LiveFrame {
    /// The text of a frame written by hand.
    static func text(_ frame: some Encodable & JSONWritable) -> String {
        JSONWriter.text(of: frame)
    }
}
