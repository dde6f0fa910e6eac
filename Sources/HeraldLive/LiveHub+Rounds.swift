import Foundation
import HeraldCore
import HeraldStore

extension LiveHub {
    /// How many feed rows one query reads.
    static let page = 2_000
    /// Up to how many people a round's query names; beyond, it reads every row's audience.
    /// A catch-up names its people however many: its cursors may be far back, and the rows
    /// since (a large group's messages and their receipts) are mostly for others.
    static let readersSent = 200

    /// One round: the feed's new positions to every joined socket whose person may see them,
    /// then each joining socket's catch-up from its cursor, to the same head. Rounds run one at
    /// a time, so a socket is given every position up to the head exactly once: by its
    /// catch-up, or by the rounds after it joined.
    func round() async throws {
        // The round's view of the joined sockets is gone once `delivered` returns: the
        // machine's own then takes the caught-up sockets in place, not in a copy of it.
        guard let (head, caughtUp) = try await delivered() else { return }
        machine.withLock { $0.roundEnded(head: head, caughtUp: caughtUp) }
    }

    /// A round's deliveries. - Returns: the head they reached and the sockets caught up.
    private func delivered() async throws -> (head: Int64, caughtUp: [UInt64])? {
        // No socket here, nothing to do: one that registers asks for a round itself, and is
        // caught up from its own cursor.
        guard let round = machine.withLock({ $0.round() }) else { return nil }
        let head = try await background.liveHead()
        if head > round.cursor {
            for sockets in round.joined.values {
                try await deliver(tenant: sockets.tenant, to: sockets.people, after: round.cursor, through: head)
            }
        }
        // Joining sockets are caught up together (a reconnect storm is a few queries, not one a
        // socket): a batch reads from its lowest cursor, and each socket takes only the rows
        // after its own (`LiveSocket.deliver`); cursors far apart go in separate batches.
        for batch in Self.catchUpBatches(round.joining.filter { $0.position < head }) {
            try await deliver(
                tenant: batch[0].tenant, to: Dictionary(grouping: batch, by: \.person.id), after: batch[0].position, through: head,
                namingReaders: true)
        }
        for socket in round.joining { socket.advance(to: head) }
        return (head, round.joining.map(\.id))
    }

    /// A round that fails (the database) leaves the cursor where it was and asks for another
    /// round, which runs after the loop's pause: a frame is delivered, never skipped (a socket
    /// takes each position once, so the rows the failed round gave it are not given twice).
    func roundOrAgain() async throws {
        do {
            try await round()
        } catch {
            roundWake.wake()
            throw error
        }
    }

    /// The rows after `after` up to `through` for `people` (their sockets by person), each to
    /// their sockets.
    private func deliver(
        tenant: Tenant, to people: [UUID: [LiveSocket]], after: Int64, through: Int64, namingReaders: Bool = false
    ) async throws {
        // Many people: the rows' whole audiences, picked out here (cheaper than sending them all).
        let readers = people.count > Self.readersSent && !namingReaders ? nil : people.values.compactMap { $0.first?.person }
        var page = LiveRowPage(after: after)
        while true {
            let rows = try await background.withTenant(tenant) { session in
                try await session.liveRows(
                    for: readers, after: page.position, afterReader: page.reader, through: through, limit: Self.page, committing: true)
            }
            var received: [ReceivedKey: Int64] = [:]
            var texts: [Int64: [PositionedFrame]] = [:]
            for row in rows {
                guard let targets = people[row.reader] else { continue }
                let frames: [PositionedFrame]
                if case .conversation(let id) = row.payload {
                    guard let reader = targets.first?.person else { continue }
                    let conversation: ConversationRecord
                    do {
                        conversation = try await background.withTenant(tenant) { try await $0.liveConversation(id, viewer: reader) }
                    } catch let error as StoreError where error.code == .notFound {
                        // They take part no longer: the frame is not theirs. Any other error
                        // ends the round, which runs again from the same cursor (`roundOrAgain`).
                        continue
                    }
                    frames = [
                        PositionedFrame(
                            position: row.position,
                            text: LiveFrame.text(LiveFrame.Conversation(cursor: LiveFrame.cursor(row.position), conversation: conversation)))
                    ]
                } else if let cached = texts[row.position] {
                    frames = cached
                } else {
                    frames = Self.frames(of: row)
                    texts[row.position] = frames
                }
                if case .inboxStatus(let change) = row.payload, change.ids.isEmpty { continue }
                let item = try await inboxItem(of: row, for: targets.first?.person, tenant: tenant)
                var wrote = false
                for socket in targets {
                    // A socket resuming from a cursor inside a batch of receipts takes the rest.
                    let written = frames.filter { socket.deliver($0.text, at: $0.position) }.count
                    guard written > 0 else { continue }
                    wrote = true
                    metrics.sent(LiveFrame.typeName(row.payload), count: written)
                    if let item {
                        socket.send(LiveFrame.text(LiveFrame.Inbox(cursor: LiveFrame.cursor(row.position), item: item)))
                        metrics.sent("inbox")
                    }
                    // The badge it came with (the person's count with it).
                    if let badge = Self.badge(of: row.payload) {
                        socket.send(LiveFrame.text(LiveFrame.Badge(count: badge)))
                        metrics.sent("badge")
                    }
                }
                if wrote, case .message(let conversation, let message) = row.payload, message.sender.id != row.reader {
                    let key = ReceivedKey(person: row.reader, conversation: conversation)
                    received[key] = max(received[key] ?? 0, message.sequence)
                }
            }
            if !received.isEmpty {
                try await background.withTenant(tenant) { session in
                    session.markReceived(received.map { ($0.key.person, $0.key.conversation, $0.value) })
                }
            }
            guard rows.count == Self.page, let last = rows.last else { break }
            page = LiveRowPage(after: last.position, reader: last.reader)
        }
    }

    /// The inbox item a notification's row adds for `reader` (nil for a notification that is
    /// no item: a chat message, or one they turned off). Any error but not-found ends the
    /// round, which runs again from the same cursor (`roundOrAgain`).
    private func inboxItem(of row: LiveRow, for reader: Person?, tenant: Tenant) async throws -> InboxItem? {
        guard case .notification(let notification) = row.payload, notification.activityID != nil, let reader else { return nil }
        do {
            return try await background.withTenant(tenant) { try await $0.inboxItem(notification.id, of: reader) }
        } catch let error as StoreError where error.code == .notFound {
            return nil
        }
    }

    /// The badge a row's frame comes with: the person's count after it.
    static func badge(of payload: LivePayload) -> Int? {
        switch payload {
        case .notification(let notification): notification.badge
        case .inboxStatus(let change): change.badge
        default: nil
        }
    }

    /// How far apart (in feed positions) the cursors of sockets caught up together may be.
    static let catchUpSpread: Int64 = 1_000

    /// `sockets` in batches of one tenant each, in order of cursor, each spanning at most
    /// `catchUpSpread` positions: the first socket of a batch has its lowest cursor.
    static func catchUpBatches(_ sockets: [LiveSocket]) -> [[LiveSocket]] {
        var batches: [[LiveSocket]] = []
        for group in Dictionary(grouping: sockets, by: { $0.tenant.id }).values {
            var batch: [LiveSocket] = []
            for socket in group.sorted(by: { $0.position < $1.position }) {
                if let first = batch.first, socket.position - first.position > catchUpSpread {
                    batches.append(batch)
                    batch = []
                }
                batch.append(socket)
            }
            if !batch.isEmpty { batches.append(batch) }
        }
        return batches
    }

    /// A durable row's frames, each at the position its cursor names: one, or one a receipt of
    /// a batch (the positions up to the row's own, in order). The conversation frame is each
    /// reader's own, made apart.
    static func frames(of row: LiveRow) -> [PositionedFrame] {
        let cursor = LiveFrame.cursor(row.position)
        let text: String
        switch row.payload {
        case .message(let conversation, let message):
            text = LiveFrame.text(LiveFrame.Message(cursor: cursor, conversation: conversation, message: message))
        case .receipt(let conversation, let receipt):
            text = LiveFrame.text(
                LiveFrame.Receipt(cursor: cursor, conversation: conversation, person: receipt.person, received: receipt.received, read: receipt.read))
        case .deliveryReceipts(let conversation, let receipts):
            let first = row.position - Int64(row.payload.positions) + 1
            return receipts.enumerated().map { index, receipt in
                let position = first + Int64(index)
                let frame = LiveFrame.Receipt(
                    cursor: LiveFrame.cursor(position), conversation: conversation, person: receipt.person, received: receipt.received,
                    read: receipt.read)
                return PositionedFrame(position: position, text: LiveFrame.text(frame))
            }
        case .conversation(let id):
            text = LiveFrame.text(LiveFrame.Failure(code: "internal", detail: "conversation \(id) is made per reader"))
        case .activity(let change):
            text = LiveFrame.text(LiveFrame.Activity(cursor: cursor, event: change.event, activity: change.activity))
        case .notification(let notification):
            text = LiveFrame.text(LiveFrame.Notification(cursor: cursor, notification: notification))
        case .inboxStatus(let change):
            text = LiveFrame.text(LiveFrame.InboxStatus(cursor: cursor, ids: change.ids, status: change.status, at: change.at))
        }
        return [PositionedFrame(position: row.position, text: text)]
    }
}

/// A durable frame and the feed position its cursor names.
struct PositionedFrame {
    let position: Int64
    let text: String
}

/// Where a page of feed rows ends: a position, and the last reader of it that was read.
struct LiveRowPage {
    var position: Int64
    var reader: UUID?

    init(after position: Int64, reader: UUID? = nil) {
        self.position = position
        self.reader = reader
    }
}

/// A person's receipt in one conversation.
struct ReceivedKey: Hashable {
    let person: UUID
    let conversation: UUID
}
