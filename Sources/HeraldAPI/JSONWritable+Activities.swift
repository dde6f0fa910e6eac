import HeraldCore

// The activity objects the API writes most, by hand (see `JSONWritable`): keys in sorted
// order, as `JSONBody.encoder` writes them.

extension ActivityRecord: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.raw("{\"assignee\":")
        writer.value(assignee)
        writer.raw(",\"createdAt\":")
        writer.date(createdAt)
        writer.raw(",\"deadline\":")
        writer.string(deadline.description)
        writer.raw(",\"id\":")
        writer.uuid(id)
        writer.raw(",\"manager\":")
        writer.value(manager)
        writer.raw(",\"name\":")
        writer.string(name)
        writer.raw(",\"priority\":")
        writer.string(priority.rawValue)
        writer.raw(",\"status\":")
        writer.string(status.rawValue)
        writer.raw(",\"team\":")
        writer.value(team)
        writer.raw(",\"updatedAt\":")
        writer.date(updatedAt)
        writer.raw(",\"version\":")
        writer.int(version)
        writer.raw("}")
    }
}

extension ActivityRecord.TeamReference: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.raw("{\"id\":")
        writer.uuid(id)
        writer.raw(",\"name\":")
        writer.string(name)
        writer.raw(",\"slug\":")
        writer.string(slug)
        writer.raw("}")
    }
}

extension PageBody: JSONWritable where Item: JSONWritable {
    func write(to writer: inout JSONWriter) {
        writer.raw("{\"items\":[")
        for (index, item) in items.enumerated() {
            if index > 0 { writer.raw(",") }
            writer.value(item)
        }
        writer.raw("]")
        // `Codable` leaves an absent `next` out.
        if let next {
            writer.raw(",\"next\":")
            writer.string(next)
        }
        writer.raw("}")
    }
}
