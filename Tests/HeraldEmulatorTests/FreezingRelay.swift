import Foundation
import Glibc
import Synchronization
import Testing

@testable import HeraldEmulator
@testable import HeraldHTTP

/// A TCP relay on the loopback for tests: it forwards each connection to an upstream port
/// until `freeze()`, after which the connections it has stay open and carry nothing, like a
/// network path that went silent without a reset. Connections accepted afterwards are
/// forwarded as before. `holdAnswers()` stops only what the server sends, as a server that
/// keeps reading but has stopped writing (its flow-control window updates included).
final class FreezingRelay: Sendable {
    let port: Int
    private let listener: Int32
    private let upstreamPort: Int
    private let accepted = Atomic<Int>(0)
    private let frozenBelow = Atomic<Int>(0)
    private let answersHeldBelow = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(upstreamPort: Int) throws {
        self.upstreamPort = upstreamPort
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        guard listener >= 0, bound == 0, listen(listener, 16) == 0, named == 0 else {
            throw Failure(description: "the relay cannot listen: \(String(cString: strerror(errno)))")
        }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptConnections() }
    }

    /// Stops carrying bytes on every connection accepted so far.
    func freeze() { frozenBelow.store(accepted.load(ordering: .acquiring), ordering: .releasing) }

    /// Stops carrying the server's bytes on every connection accepted so far; the client's
    /// still reach the server.
    func holdAnswers() { answersHeldBelow.store(accepted.load(ordering: .acquiring), ordering: .releasing) }

    func stop() {
        stopped.store(true, ordering: .releasing)
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return address
    }

    private func acceptConnections() {
        while !stopped.load(ordering: .acquiring) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: UInt16(upstreamPort))
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                close(client)
                close(upstream)
                continue
            }
            let index = accepted.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
            Thread.detachNewThread { [self] in relay(client, upstream, index: index) }
        }
    }

    private func relay(_ client: Int32, _ upstream: Int32, index: Int) {
        defer {
            close(client)
            close(upstream)
        }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while !stopped.load(ordering: .acquiring) {
            if index < frozenBelow.load(ordering: .acquiring) {
                usleep(20_000)
                continue
            }
            let answersHeld = index < answersHeldBelow.load(ordering: .acquiring)
            var descriptors = [
                pollfd(fd: client, events: Int16(POLLIN), revents: 0),
                pollfd(fd: upstream, events: answersHeld ? 0 : Int16(POLLIN), revents: 0)
            ]
            guard poll(&descriptors, 2, 50) > 0 else { continue }
            for (from, to) in [(client, upstream), (upstream, client)] where descriptors[from == client ? 0 : 1].revents != 0 {
                let count = read(from, &buffer, buffer.count)
                guard count > 0 else { return }
                var sent = 0
                while sent < count {
                    let written = buffer.withUnsafeBytes { write(to, $0.baseAddress! + sent, count - sent) }
                    guard written > 0 else { return }
                    sent += written
                }
            }
        }
    }
}

extension FreezingRelay {
    /// Runs `body` with a relay in front of a running emulator's HTTPS port, a client that
    /// trusts the emulator, and the relay's `https://` base URL.
    static func inFrontOfAnEmulator(_ body: @Sendable (FreezingRelay, HTTPClient, String) async throws -> Void) async throws {
        try await Emulator.withRunning(logger: quiet) { emulator, endpoints in
            let relay = try FreezingRelay(upstreamPort: try #require(URLComponents(string: endpoints.https)?.port))
            defer { relay.stop() }
            let http = try client(emulator)
            defer { http.shutdown() }
            try await body(relay, http, "https://127.0.0.1:\(relay.port)")
        }
    }
}
