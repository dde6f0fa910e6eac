import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A mail relay on loopback for the demo and tests (docs/notifications.md#email): it speaks
/// enough SMTP for a submission in the clear (EHLO, MAIL, RCPT, DATA, RSET, NOOP, QUIT),
/// accepts every message, answers `250 … queued as <id>`, and keeps what it took.
public final class EmulatorSMTP: Sendable {
    /// One message as it arrived.
    public struct Email: Sendable, Equatable {
        public var from: String
        public var to: [String]
        /// The message, dot-stuffing undone, lines in CRLF.
        public var data: String
        public var queueID: String
    }

    public let port: Int
    private let channel: any Channel
    private let received: Mutex<[Email]>
    /// Replies given instead of `250` to `RCPT TO` for an address (`550 5.1.1 …`, `451 4.3.0 …`).
    private let refusals = Mutex<[String: String]>([:])

    /// Connections accepted so far.
    private let accepted = Atomic<Int>(0)

    /// How many connections clients opened (a client that keeps its connections opens few).
    public var sessions: Int { accepted.load(ordering: .relaxed) }

    fileprivate func opened() { accepted.add(1, ordering: .relaxed) }

    /// How many of the next sessions get no greeting at all: a relay that accepts connections
    /// and hangs.
    private let hanging = Atomic<Int>(0)

    /// Hangs the next `sessions` sessions (the ones after them are answered).
    public func hang(sessions: Int) { hanging.store(sessions, ordering: .relaxed) }

    /// Whether this new session hangs (one fewer to hang after it).
    fileprivate var hangs: Bool {
        var left = hanging.load(ordering: .relaxed)
        while left > 0 {
            let (exchanged, found) = hanging.compareExchange(expected: left, desired: left - 1, ordering: .relaxed)
            if exchanged { return true }
            left = found
        }
        return false
    }

    /// Answers `reply` to every message for `address` from now on (nil: accepts them again).
    public func refuse(_ address: String, with reply: String?) { refusals.withLock { $0[address] = reply } }

    fileprivate func refusal(for address: String) -> String? { refusals.withLock { $0[address] } }

    private init(port: Int, channel: any Channel) {
        self.port = port
        self.channel = channel
        self.received = Mutex([])
    }

    /// Listens on a free port of `host`.
    public static func start(host: String = "127.0.0.1") async throws -> EmulatorSMTP {
        let box = Inbox()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(SMTPSession(keep: box.keep, refusal: box.refusal, hangs: box.hangs()))
                }
            }
            .bind(host: host, port: 0).get()
        let smtp = EmulatorSMTP(port: channel.localAddress?.port ?? 0, channel: channel)
        box.target.withLock { $0 = smtp }
        return smtp
    }

    /// The messages taken so far, oldest first.
    public var emails: [Email] { received.withLock { $0 } }

    public func stop() async { try? await channel.close() }

    fileprivate func keep(_ email: Email) { received.withLock { $0.append(email) } }

    /// Where sessions hand their messages (the relay exists once its port is bound).
    private final class Inbox: Sendable {
        let target = Mutex<EmulatorSMTP?>(nil)
        var keep: @Sendable (Email) -> Void { { [self] email in target.withLock { $0 }?.keep(email) } }
        var refusal: @Sendable (String) -> String? { { [self] address in target.withLock { $0 }?.refusal(for: address) } }
        var hangs: @Sendable () -> Bool {
            { [self] in
                let relay = target.withLock { $0 }
                relay?.opened()
                return relay?.hangs ?? false
            }
        }
    }
}

/// One client's SMTP session.
private final class SMTPSession: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let keep: @Sendable (EmulatorSMTP.Email) -> Void
    let refusal: @Sendable (String) -> String?
    /// Says nothing, ever.
    let hangs: Bool
    private var pending: [UInt8] = []
    private var inData = false
    private var from = ""
    private var to: [String] = []
    private var lines: [String] = []

    init(keep: @escaping @Sendable (EmulatorSMTP.Email) -> Void, refusal: @escaping @Sendable (String) -> String?, hangs: Bool) {
        self.keep = keep
        self.refusal = refusal
        self.hangs = hangs
    }

    func channelActive(context: ChannelHandlerContext) {
        if !hangs { reply("220 herald-emulator ESMTP ready", context) }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !hangs else { return }
        var buffer = unwrapInboundIn(data)
        pending += buffer.readBytes(length: buffer.readableBytes) ?? []
        // A runaway line is not SMTP: the session ends.
        guard pending.count < 20_000_000 else {
            context.close(promise: nil)
            return
        }
        while let end = pending.firstIndex(of: 10) {
            var line = Array(pending[..<end])
            pending.removeFirst(end + 1)
            if line.last == 13 { line.removeLast() }
            handle(String(decoding: line, as: UTF8.self), context)
        }
    }

    private func handle(_ line: String, _ context: ChannelHandlerContext) {
        if inData {
            guard line != "." else {
                inData = false
                let id = String(UUID().uuidString.prefix(12))
                keep(EmulatorSMTP.Email(from: from, to: to, data: lines.joined(separator: "\r\n") + "\r\n", queueID: id))
                lines = []
                reply("250 2.0.0 Ok: queued as \(id)", context)
                return
            }
            lines.append(line.hasPrefix("..") ? String(line.dropFirst()) : line)
            return
        }
        let verb = line.prefix(4).uppercased()
        switch verb {
        case "EHLO": reply("250-herald-emulator\r\n250-8BITMIME\r\n250 SIZE 10485760", context)
        case "HELO": reply("250 herald-emulator", context)
        case "MAIL":
            from = Self.address(in: line)
            to = []
            reply("250 2.1.0 Ok", context)
        case "RCPT":
            let address = Self.address(in: line)
            if let refused = refusal(address) { return reply(refused, context) }
            to.append(address)
            reply("250 2.1.5 Ok", context)
        case "DATA":
            guard !to.isEmpty else { return reply("503 5.5.1 RCPT first", context) }
            inData = true
            reply("354 End data with <CR><LF>.<CR><LF>", context)
        case "RSET":
            from = ""
            to = []
            reply("250 2.0.0 Ok", context)
        case "NOOP": reply("250 2.0.0 Ok", context)
        case "QUIT":
            let buffer = context.channel.allocator.buffer(string: "221 2.0.0 Bye\r\n")
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(buffer)).whenComplete { _ in channel.close(promise: nil) }
        default: reply("502 5.5.2 Command not recognized", context)
        }
    }

    private func reply(_ text: String, _ context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: text + "\r\n")), promise: nil)
    }

    /// The address between `<` and `>`.
    static func address(in line: String) -> String {
        guard let open = line.firstIndex(of: "<"), let close = line[open...].firstIndex(of: ">") else { return "" }
        return String(line[line.index(after: open)..<close])
    }
}
