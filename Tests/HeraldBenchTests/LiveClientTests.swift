import Crypto
import Foundation
import HeraldBench
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The live channel's client keeps the frames a server sends right behind its 101: one read
/// may bring both. NIO's client pipeline dropped those bytes by default, and `herald demo`
/// then waited for a `hello` that had arrived (about one run in five under load).
@Suite struct LiveClientTests {
    @Test func aFrameInTheSameReadAsThe101IsReceived() async throws {
        let peer = try OneShotPeer()
        let hello = #"{"type":"hello","person":"carol@demo.test","cursor":"0"}"#
        let answered = Task { await peer.answerUpgrade(thenFrames: [hello, #"{"type":"pong"}"#]) }
        let client = try #require(LiveClient(base: "http://127.0.0.1:\(peer.port)"))
        let (first, second) = try await client.session(token: "t", timeout: .seconds(30)) { session in
            (try await session.receive(), try await session.receive(type: "pong")?["type"] as? String)
        }
        #expect(first == hello)
        #expect(second == "pong")
        #expect(await answered.value.contains("Authorization: Bearer t"))
    }

    /// A server that never answers the upgrade does not hold the client for ever: its
    /// deadline counts from the connection, not from the 101.
    @Test func aServerThatNeverAnswersTheUpgradeIsLeftAtTheDeadline() async throws {
        let peer = try OneShotPeer()
        let heard = Task { await peer.answerUpgrade(thenFrames: nil) }
        let client = try #require(LiveClient(base: "http://127.0.0.1:\(peer.port)"))
        await #expect(throws: (any Error).self) {
            try await client.session(token: "t", timeout: .seconds(1)) { _ in }
        }
        #expect(await heard.value.contains("GET /v1/live"))
    }
}

/// A WebSocket server of one connection, written with plain sockets so that what it sends
/// goes out in one `send`: the 101 and the frames after it together.
final class OneShotPeer: Sendable {
    let listener: Int32
    let port: Int

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        guard listener >= 0, bound, listen(listener, 1) == 0 else { throw POSIXError(.EADDRNOTAVAIL) }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(listener) }

    /// Accepts one connection, reads its upgrade request, and answers the 101 with `frames`
    /// (unmasked text frames, as a server's are) in the same write, or, for `nil`, answers
    /// nothing. - Returns: the request, once the client has closed.
    /// On a thread of its own: it blocks, and Swift's cooperative threads are two here.
    func answerUpgrade(thenFrames frames: [String]?) async -> String {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: self.blockingAnswer(frames)) }.start()
        }
    }

    private func blockingAnswer(_ frames: [String]?) -> String {
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { return "" }
        defer { close(connection) }
        var request = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: request, as: UTF8.self).contains("\r\n\r\n") {
            let count = recv(connection, &buffer, buffer.count, 0)
            guard count > 0 else { return "" }
            request += buffer[0..<count]
        }
        let text = String(decoding: request, as: UTF8.self)
        guard let frames else {
            while recv(connection, &buffer, buffer.count, 0) > 0 {}
            return text
        }
        let key =
            text.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-key:") }
            .map { $0.dropFirst("sec-websocket-key:".count).trimmingCharacters(in: .whitespaces) } ?? ""
        let accept = Data(Insecure.SHA1.hash(data: Data((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))).base64EncodedString()
        var reply = Array(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n".utf8)
        for frame in frames {
            let payload = Array(frame.utf8)
            reply += [0x81, UInt8(payload.count)] + payload  // fin + text; under 126 bytes
        }
        _ = reply.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        // Until the client closes (its close frame, then the end of the stream).
        while recv(connection, &buffer, buffer.count, 0) > 0 {}
        return text
    }
}
