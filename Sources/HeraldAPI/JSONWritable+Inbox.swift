import HeraldCore

// The inbox's items, by hand (see `JSONWritable`): a page of them is the answer a person's app
// asks for most (docs/inbox.md). Keys in sorted order, absent values left out, as
// `JSONBody.encoder` writes them.

extension InboxItem: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.raw("{\"actions\":[")
        for (index, action) in actions.enumerated() {
            if index > 0 { writer.raw(",") }
            writer.string(action.rawValue)
        }
        writer.raw("]")
        if let activity {
            writer.raw(",\"activity\":")
            writer.value(activity)
        }
        writer.raw(",\"activityId\":")
        writer.uuid(activityID)
        writer.raw(",\"app\":")
        writer.string(app.rawValue)
        writer.raw(",\"body\":")
        writer.string(body)
        writer.raw(",\"createdAt\":")
        writer.date(createdAt)
        if let digestID {
            writer.raw(",\"digestId\":")
            writer.uuid(digestID)
        }
        writer.raw(",\"engagement\":")
        writer.value(engagement)
        writer.raw(",\"event\":")
        writer.string(event)
        writer.raw(",\"id\":")
        writer.uuid(id)
        if let priority {
            writer.raw(",\"priority\":")
            writer.string(priority.rawValue)
        }
        writer.raw(",\"title\":")
        writer.string(title)
        writer.raw("}")
    }
}

extension InboxItem.ActivityNow: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.raw("{\"id\":")
        writer.uuid(id)
        writer.raw(",\"name\":")
        writer.string(name)
        writer.raw(",\"priority\":")
        writer.string(priority.rawValue)
        writer.raw(",\"status\":")
        writer.string(status.rawValue)
        writer.raw(",\"version\":")
        writer.int(version)
        writer.raw("}")
    }
}

extension InboxEngagement: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        var first = true
        func key(_ name: StaticString, _ writer: inout JSONWriter) {
            writer.raw(first ? "{" : ",")
            first = false
            writer.raw(name)
        }
        if let action {
            key("\"action\":", &writer)
            writer.string(action)
        }
        for (name, mark) in [("\"archived\":", archived), ("\"delivered\":", delivered), ("\"interacted\":", interacted)] as [(StaticString, Mark?)] {
            if let mark {
                key(name, &writer)
                writer.value(mark)
            }
        }
        for (name, mark) in [("\"opened\":", opened), ("\"read\":", read), ("\"seen\":", seen)] as [(StaticString, Mark?)] {
            if let mark {
                key(name, &writer)
                writer.value(mark)
            }
        }
        writer.raw(first ? "{}" : "}")
    }
}

extension InboxEngagement.Mark: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.raw("{\"at\":")
        writer.date(at)
        if let device {
            writer.raw(",\"deviceId\":")
            writer.uuid(device)
        }
        writer.raw("}")
    }
}
