import Foundation
import Synchronization

/// What `herald bench live`'s sockets saw, frame by frame: each socket's cursor and the bench
/// messages it got, every latency, and presence. Frames are read cheaply (Herald writes keys in
/// sorted order, `type` last): only presence frames are parsed whole.
final class LiveBenchLedger: Sendable {
    struct Socket {
        var cursor: String?
        var helloAt: ContinuousClock.Instant?
        /// The bench messages of the group it got, by number, in order.
        var group: [Int] = []
        var presenceFrames = 0
        var presenceEntries = 0
        var online: Set<String> = []
        /// Whom it follows, and how many of them it has seen online.
        var wanted: Set<String> = []
        var wantedOnline = 0
    }

    struct State {
        var sockets: [Socket]
        /// When each bench message's POST was sent, and when its answer came.
        var sent: [Int: ContinuousClock.Instant] = [:]
        var answered: [Int: ContinuousClock.Instant] = [:]
        /// Which messages went to the group (the others are the one-to-one's).
        var groupMessages: Set<Int> = []
        /// Milliseconds from a message's POST to its frame on a socket, and from its answer.
        var groupLatency: [Double] = []
        var groupAfterAnswer: [Double] = []
        var directLatency: [Double] = []
        var closed = 0
        /// Sockets the server closed as slow readers (1013), each reopened from its cursor.
        var slowCloses = 0
        /// Sockets that have seen everyone they follow online: kept as frames come, so that
        /// waiting for the storm's end costs nothing a poll (checking 10,000 sockets' sets
        /// every 20 ms took this client's CPU from the server it measures).
        var satisfied = 0

        /// Socket `index` follows `people` from now on, and has seen nobody online.
        mutating func follow(_ people: Set<String>, on index: Int) {
            if sockets[index].wantedOnline == sockets[index].wanted.count { satisfied -= 1 }
            sockets[index].online = []
            sockets[index].wanted = people
            sockets[index].wantedOnline = 0
            if people.isEmpty { satisfied += 1 }
        }

        mutating func saw(_ person: String, online: Bool, on index: Int) {
            let wanted = sockets[index].wanted.contains(person)
            let before = sockets[index].wantedOnline == sockets[index].wanted.count
            if online {
                if sockets[index].online.insert(person).inserted, wanted { sockets[index].wantedOnline += 1 }
            } else if sockets[index].online.remove(person) != nil, wanted {
                sockets[index].wantedOnline -= 1
            }
            let after = sockets[index].wantedOnline == sockets[index].wanted.count
            if before != after { satisfied += after ? 1 : -1 }
        }
    }

    let state: Mutex<State>

    init(sockets: Int) {
        // Each socket follows nobody yet: all of them have seen everyone they follow.
        state = Mutex(State(sockets: Array(repeating: Socket(), count: sockets), satisfied: sockets))
    }

    /// A text frame of socket `index`.
    func received(_ text: String, on index: Int) {
        let now = ContinuousClock.now
        let type = Self.field("type", in: text)
        let cursor = Self.field("cursor", in: text)
        let number = type == "message" ? Self.benchNumber(in: text) : nil
        var people: [[String: Any]] = []
        if type == "presence", let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] {
            people = object["people"] as? [[String: Any]] ?? []
        }
        let entries = people.compactMap { entry -> (String, Bool)? in
            guard let person = entry["person"] as? String, let online = entry["online"] as? Bool else { return nil }
            return (person, online)
        }
        state.withLock { state in
            if let cursor { state.sockets[index].cursor = cursor }
            switch type {
            case "hello":
                state.sockets[index].helloAt = now
            case "message":
                guard let number, let sent = state.sent[number] else { return }
                let milliseconds = (now - sent).inMilliseconds
                if state.groupMessages.contains(number) {
                    state.sockets[index].group.append(number)
                    state.groupLatency.append(milliseconds)
                    if let answered = state.answered[number] { state.groupAfterAnswer.append((now - answered).inMilliseconds) }
                } else {
                    state.directLatency.append(milliseconds)
                }
            case "presence":
                state.sockets[index].presenceFrames += 1
                state.sockets[index].presenceEntries += entries.count
                for (person, online) in entries { state.saw(person, online: online, on: index) }
            default:
                break
            }
        }
    }

    /// The string value of `"key":"…"` in `text`, if there is one (the first).
    static func field(_ key: String, in text: String) -> String? {
        guard let start = text.range(of: "\"\(key)\":\"") else { return nil }
        guard let end = text[start.upperBound...].firstIndex(of: "\"") else { return nil }
        return String(text[start.upperBound..<end])
    }

    /// The number of a bench message (`bench#12#` in its text).
    static func benchNumber(in text: String) -> Int? {
        guard let start = text.range(of: "bench#") else { return nil }
        let digits = text[start.upperBound...].prefix { $0.isASCII && $0.isNumber }
        return Int(digits)
    }
}

extension Duration {
    var inMilliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1_000 + Double(attoseconds) / 1e15
    }
}

/// The `p`th percentile of `values` (nearest rank), NaN for none.
func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p / 100))]
}
