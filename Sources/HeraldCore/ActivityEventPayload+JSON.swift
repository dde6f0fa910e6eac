import Foundation

// The payload every activity transition writes to the outbox, by hand (see `JSONWritable`):
// keys in sorted order, an absent optional left out, as `JSONEncoder` writes it.

extension ActivityEventPayload: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.raw("{\"activityID\":")
        writer.uuid(activityID)
        writer.raw(",\"activityName\":")
        writer.string(activityName)
        writer.raw(",\"actor\":")
        writer.value(actor)
        writer.raw(",\"assignee\":")
        writer.value(assignee)
        writer.raw(",\"deadline\":")
        writer.string(deadline.description)
        writer.raw(",\"event\":")
        writer.string(event.rawValue)
        writer.raw(",\"manager\":")
        writer.value(manager)
        writer.raw(",\"occurredAtMilliseconds\":")
        writer.int(Int(occurredAtMilliseconds))
        writer.raw(",\"priority\":")
        writer.string(priority.rawValue)
        if let reason {
            writer.raw(",\"reason\":")
            writer.string(reason)
        }
        writer.raw(",\"recipients\":[")
        for (index, recipient) in recipients.enumerated() {
            writer.raw(index == 0 ? "{\"app\":" : ",{\"app\":")
            writer.string(recipient.app.rawValue)
            writer.raw(",\"id\":")
            writer.uuid(recipient.id)
            writer.raw("}")
        }
        writer.raw("],\"status\":")
        writer.string(status.rawValue)
        writer.raw(",\"teamID\":")
        writer.uuid(teamID)
        writer.raw(",\"teamName\":")
        writer.string(teamName)
        if let version {
            writer.raw(",\"version\":")
            writer.int(version)
        }
        if let waitingSinceMilliseconds {
            writer.raw(",\"waitingSinceMilliseconds\":")
            writer.int(Int(waitingSinceMilliseconds))
        }
        writer.raw("}")
    }
}

extension PersonReference: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.raw("{\"email\":")
        writer.string(email)
        writer.raw(",\"id\":")
        writer.uuid(id)
        writer.raw(",\"name\":")
        writer.string(name)
        writer.raw("}")
    }
}
