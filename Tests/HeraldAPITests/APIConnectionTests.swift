import Foundation
import HeraldAPI
import HeraldEmulator
import HeraldTestSupport
import HeraldTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Sockets that say nothing, say it slowly, or come in numbers are closed (issue 41: 200
/// such connections were all open after 75 s, and 1,100 from one client starved `/healthz`).
/// Each check waits for the server's close itself; the bounds are only there so that a
/// server that never closes fails the test instead of hanging it.
@Suite struct APIConnectionTests {
    static let short = ConnectionLimits(idleTimeout: .seconds(1), requestTimeout: .seconds(2), handshakeTimeout: .seconds(1), perAddress: 100)

    @Test func silentSlowAndIdleConnectionsAreClosed() async throws {
        try await APIHarness.with(.live, connections: Self.short) { api in
            let port = try #require(api.port)
            let silent = try RawSocket(port: port)
            #expect(await silent.waitForClose(within: .seconds(30)), "a connection that never sends")

            let slowHead = try RawSocket(port: port)
            #expect(
                await slowHead.trickle(["GET /healthz HTTP/1.1\r\n", "Host: x\r\n"] + Array(repeating: "X-Slow: 1\r\n", count: 200)),
                "a request head sent a line at a time")

            let slowBody = try RawSocket(port: port)
            #expect(
                await slowBody.trickle(
                    ["POST /v1/devices HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"]
                        + Array(repeating: " ", count: 200)), "a body sent a byte at a time")

            let idle = try RawSocket(port: port)
            idle.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await idle.readUntil("\"ok\"", within: .seconds(30)), "the request is answered")
            #expect(await idle.waitForClose(within: .seconds(30)), "an idle keep-alive connection")
        }
    }

    /// What the HTTP parser refuses gets a problem document (431 for headers too large),
    /// not an empty 400.
    @Test(arguments: [
        ("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad: a\u{01}b\r\n\r\n", "400"),
        ("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\n\r\n", "400"),
        ("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "a", count: 100 * 1024) + "\r\n\r\n", "431")
    ])
    func malformedRequestsGetAProblemDocument(request: String, status: String) async throws {
        try await APIHarness.with(.live) { api in
            let socket = try RawSocket(port: try #require(api.port))
            socket.send(request)
            #expect(await socket.readUntil("}", within: .seconds(30)) && socket.received.hasPrefix("HTTP/1.1 \(status)"), "\(socket.received)")
            #expect(socket.received.contains("application/problem+json") && socket.received.contains("\"status\":\(status)"), "\(socket.received)")
        }
    }

    @Test func anAddressOverItsShareIsClosedOnArrivalAndTheRestStayServed() async throws {
        let limits = ConnectionLimits(idleTimeout: .seconds(120), requestTimeout: .seconds(120), handshakeTimeout: .seconds(120), perAddress: 4)
        try await APIHarness.with(.live, connections: limits) { api in
            let port = try #require(api.port)
            let held = try (0..<4).map { _ in try RawSocket(port: port) }
            // Each of the four is accepted and served.
            for socket in held {
                socket.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(await socket.readUntil("\"ok\"", within: .seconds(30)))
            }
            let fifth = try RawSocket(port: port)
            #expect(await fifth.waitForClose(within: .seconds(30)), "the fifth from one address")
            #expect(held.allSatisfy { $0.isOpen }, "the four stay open")
            for socket in held { socket.close() }
            // Their places are given back as they close.
            let answered = await eventually { (try? await api.call("GET", "/healthz", token: nil).status) == 200 }
            #expect(answered)
        }
    }

    @Test func aTLSConnectionThatNeverCompletesItsHandshakeIsClosedAndOneThatDoesIsNot() async throws {
        try await withTemporaryDirectory { folder in
            let certificates = try EmulatorCertificates()
            let chain = folder.appendingPathComponent("chain.pem")
            let key = folder.appendingPathComponent("key.pem")
            try certificates.serverCertificatePEM.write(to: chain, atomically: true, encoding: .utf8)
            try certificates.serverKeyPEM.write(to: key, atomically: true, encoding: .utf8)
            let tls = APIServer.TLSFiles(certificateChain: chain.path, privateKey: key.path)
            let limits = ConnectionLimits(idleTimeout: .seconds(120), requestTimeout: .seconds(120), handshakeTimeout: .seconds(1), perAddress: 100)
            try await APIHarness.with(.live, connections: limits, tls: tls) { api in
                let port = try #require(api.port)
                #expect(try await RawSocket(port: port).waitForClose(within: .seconds(30)), "a TLS connection that sends nothing")
                let partial = try RawSocket(port: port)
                partial.send("\u{16}\u{03}\u{01}\u{02}\u{00}\u{01}")
                #expect(await partial.waitForClose(within: .seconds(30)), "a ClientHello cut short")

                // A handshake that completes is not cut when the deadline passes: openssl
                // holds one connection, waits past the deadline, then sends a request on it.
                let openssl = Process()
                openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
                openssl.arguments = ["s_client", "-connect", "127.0.0.1:\(port)", "-alpn", "http/1.1", "-quiet", "-ign_eof"]
                let input = Pipe()
                let output = Pipe()
                openssl.standardInput = input
                openssl.standardOutput = output
                openssl.standardError = FileHandle.nullDevice
                try openssl.run()
                defer { if openssl.isRunning { openssl.terminate() } }
                try await Task.sleep(for: .seconds(3))
                input.fileHandleForWriting.write(Data("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
                let reading = output.fileHandleForReading
                let answer = await offThread { String(decoding: reading.readDataToEndOfFile(), as: UTF8.self) }
                #expect(answer.contains("HTTP/1.1 200") && answer.contains("\"ok\""), "\(answer)")
            }
        }
    }
}

extension APIHarness {
    /// The port of `base`.
    var port: Int? { base.split(separator: ":").last.flatMap { Int($0) } }
}

/// Runs `work` on a thread of its own and waits for it without holding a cooperative thread.
func offThread<Result: Sendable>(_ work: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: work()) }.start()
    }
}

/// A plain TCP connection to 127.0.0.1, written and read byte by byte.
final class RawSocket: @unchecked Sendable {  // Used by one test at a time, never shared.
    let fd: Int32
    /// What `readUntil` has read so far, as text.
    private(set) var received = ""

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard fd >= 0, connected == 0 else { throw POSIXError(.ECONNREFUSED) }
    }

    deinit { Glibc.close(fd) }

    func close() { shutdown(fd, Int32(SHUT_RDWR)) }

    @discardableResult
    func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Waits until the peer closes (end of stream or reset); false if it is still open after `limit`.
    /// On a thread of its own: a test that blocked Swift's two cooperative threads starved the
    /// very server it waited for.
    func waitForClose(within limit: Duration) async -> Bool {
        await offThread { self.blockingWaitForClose(within: limit) }
    }

    private func blockingWaitForClose(within limit: Duration) -> Bool {
        let deadline = ContinuousClock.now + limit
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 100) > 0 else { continue }
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { return true }
        }
        return false
    }

    /// Sends `pieces` one every 0.2 s until the peer closes; whether it closed before they ran out.
    func trickle(_ pieces: [String]) async -> Bool {
        await offThread {
            for piece in pieces {
                guard self.send(piece) else { return true }
                if self.blockingWaitForClose(within: .milliseconds(200)) { return true }
            }
            return false
        }
    }

    /// Reads until `text` has arrived; false if it has not within `limit` or the peer closed first.
    func readUntil(_ text: String, within limit: Duration) async -> Bool {
        await offThread { self.blockingReadUntil(text, within: limit) }
    }

    private func blockingReadUntil(_ text: String, within limit: Duration) -> Bool {
        let deadline = ContinuousClock.now + limit
        var bytes = Array(received.utf8)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 100) > 0 else { continue }
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { return false }
            bytes += buffer[0..<count]
            received = String(decoding: bytes, as: UTF8.self)
            if received.contains(text) { return true }
        }
        return false
    }

    /// Open: nothing has said otherwise (no end of stream, no reset, nothing unread).
    var isOpen: Bool {
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
        return count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
    }
}
