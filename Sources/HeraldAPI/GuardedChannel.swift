import HummingbirdCore
import Logging
import NIOCore
import NIOSSL
import Synchronization

/// A server child channel (Hummingbird's HTTP/1 or HTTP/2-over-TLS) behind
/// `ConnectionLimits`: a connection over its address's share is closed on arrival, and a
/// TLS connection whose handshake does not complete in time is closed. The timeouts on
/// requests are the inner channel's (`idleTimeout`) and `RequestDeadline`'s.
struct GuardedChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value

    let inner: Inner
    let limits: ConnectionLimits
    let connections: ConnectionsByAddress
    let isTLS: Bool

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let address = channel.remoteAddress?.ipAddress ?? "unknown"
        guard connections.open(address, limit: limits.perAddress) else {
            logger.debug("refused a connection over the address's limit", metadata: ["client.address": "\(address)"])
            // Closed as soon as it is active (a failed setup alone leaves the socket open).
            do {
                try channel.pipeline.syncOperations.addHandler(CloseOnArrival(), position: .first)
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
            return inner.setup(channel: channel, logger: logger)
        }
        channel.closeFuture.whenComplete { _ in connections.close(address) }
        let handshakeTimeout = TimeAmount(limits.handshakeTimeout)
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            if isTLS {
                let pipeline = channel.pipeline.syncOperations
                let tls = try pipeline.handler(type: NIOSSLServerHandler.self)
                try pipeline.addHandler(HandshakeDeadline(timeout: handshakeTimeout), position: .after(tls))
            }
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// Open connections per client address.
final class ConnectionsByAddress: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    /// Counts a connection from `address` if it stays within `limit`; whether it did.
    func open(_ address: String, limit: Int) -> Bool {
        counts.withLock { counts in
            let count = counts[address, default: 0]
            guard count < limit else { return false }
            counts[address] = count + 1
            return true
        }
    }

    func close(_ address: String) {
        counts.withLock { counts in
            let count = counts[address, default: 1] - 1
            counts[address] = count > 0 ? count : nil
        }
    }
}
