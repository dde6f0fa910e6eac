import Foundation

@testable import HeraldKit

/// Runs a `SessionMachine` by hand: a clock that moves only when told, the timers it set,
/// the connections it asked for, and every action it took.
struct MachineRun {
    var machine: SessionMachine
    /// Seconds since the start.
    private(set) var now: Duration = .zero
    private(set) var timers: [(id: Int, at: Duration)] = []
    /// The silence watches, by connection.
    private(set) var watches: [(id: Int, at: Duration)] = []
    private(set) var connects: [(id: Int, after: String?, at: Duration)] = []
    private(set) var actions: [SessionMachine.Action] = []

    init(cursor: String? = nil, jitter: [Double] = [1]) {
        let values = Jitter(jitter)
        machine = SessionMachine(cursor: cursor, jitter: { values.next() })
    }

    @discardableResult
    mutating func send(_ input: SessionMachine.Input) -> [SessionMachine.Action] {
        let result = machine.handle(input)
        for action in result {
            switch action {
            case .startTimer(let id, let delay): timers.append((id, now + delay))
            case .watch(let id, let delay): watches.append((id, now + delay))
            case .connect(let id, let after): connects.append((id, after, now))
            default: break
            }
        }
        actions += result
        return result
    }

    /// Moves the clock on, firing the timers that fall due on the way, in order.
    mutating func advance(by step: Duration) {
        let end = now + step
        while true {
            let timer = timers.enumerated().filter { $0.element.at <= end }.min { $0.element.at < $1.element.at }
            let watch = watches.enumerated().filter { $0.element.at <= end }.min { $0.element.at < $1.element.at }
            if let timer, watch.map({ timer.element.at <= $0.element.at }) ?? true {
                timers.remove(at: timer.offset)
                now = timer.element.at
                send(.timerFired(id: timer.element.id))
            } else if let watch {
                watches.remove(at: watch.offset)
                now = watch.element.at
                send(.watchFired(id: watch.element.id))
            } else {
                break
            }
        }
        now = end
    }

    var lastConnection: Int { connects.last?.id ?? 0 }
    var events: [LiveEvent] { actions.compactMap { if case .emit(let event) = $0 { event } else { nil } } }
    var sent: [ClientFrame] { actions.compactMap { if case .send(let frame) = $0 { frame } else { nil } } }
}

/// The jitter values a test chooses, in turn (the last one again when they run out).
final class Jitter: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Double]
    init(_ values: [Double]) { self.values = values }
    func next() -> Double {
        lock.lock()
        defer { lock.unlock() }
        return values.count > 1 ? values.removeFirst() : values.first ?? 1
    }
}

extension Message {
    /// A message as the server would send it.
    static func sample(sequence: Int64, from sender: String, id: UUID = UUID()) -> Message {
        let json = """
            {"id":"\(id.uuidString.lowercased())","sequence":\(sequence),"sender":{"id":"\(UUID().uuidString.lowercased())","email":"\(sender)","name":"\(sender)"},
             "text":"line \(sequence)","isSystem":false,"sentAt":"2026-11-27T10:00:00Z","storedAt":"2026-11-27T10:00:00.123Z"}
            """
        return try! JSONCoding.decoder.decode(Message.self, from: Data(json.utf8))
    }
}

extension Conversation {
    /// A conversation of these people, with their receipts so far.
    static func sample(id: UUID, people: [(String, received: Int64, read: Int64)]) -> Conversation {
        let participants = people.map { email, received, read in
            """
            {"person":{"id":"\(UUID().uuidString.lowercased())","email":"\(email)","name":"\(email)"},"muted":false,"lastReadSequence":\(read),
             "lastReceivedSequence":\(received),"viewing":false,"online":false}
            """
        }
        let json = """
            {"id":"\(id.uuidString.lowercased())","kind":"group","name":"Crew","participants":[\(participants.joined(separator: ","))],"unread":0,
             "createdAt":"2026-11-27T09:00:00Z"}
            """
        return try! JSONCoding.decoder.decode(Conversation.self, from: Data(json.utf8))
    }
}
