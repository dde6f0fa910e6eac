import Foundation
import HeraldKit
import Testing

/// The outbox's file and the cursor's.
@Suite struct OutboxStoreTests {
    func temporary(_ name: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("heraldkit-\(UUID().uuidString)").appendingPathComponent(name)
    }

    @Test func pendingMessagesComeBackFromTheFileExactlyAndInOrder() throws {
        let url = temporary("outbox.json")
        let store = FileOutboxStore(url: url)
        #expect(try store.load().isEmpty)
        let messages = (1...3).map {
            PendingMessage(
                conversation: UUID(), text: "m\($0) ✓ \u{1F44D}", createdAt: Date(timeIntervalSince1970: 1_764_000_000.123456 + Double($0)))
        }
        try store.save(messages)
        #expect(try FileOutboxStore(url: url).load() == messages)
        try store.save([])
        #expect(try FileOutboxStore(url: url).load().isEmpty)
    }

    @Test func aDamagedFileIsAnErrorNotACrash() throws {
        let url = temporary("outbox.json")
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("{not json".utf8).write(to: url)
        #expect(throws: (any Error).self) { try FileOutboxStore(url: url).load() }
    }

    @Test func theCursorFileKeepsTheLastCursor() {
        let url = temporary("bob.cursor")
        let store = FileCursorStore(url: url)
        #expect(store.load() == nil)
        store.save("1042")
        store.save("1043")
        #expect(FileCursorStore(url: url).load() == "1043")
        #expect(FileCursorStore(named: "bob@acme.test/../x").url.lastPathComponent == "bob@acme.test_.._x.cursor")
    }

    @Test func clientIdsAreFreshAndLowerCase() {
        let ids = Set((0..<100).map { _ in PendingMessage(conversation: UUID(), text: "x").clientId })
        #expect(ids.count == 100 && ids.allSatisfy { $0 == $0.lowercased() })
    }
}
