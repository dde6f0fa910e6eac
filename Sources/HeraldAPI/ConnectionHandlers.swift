/// The channel handlers behind `ConnectionLimits`: small, each with one deadline or rule.
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOTLS

/// Closes a TLS connection whose handshake has not completed within `timeout` (placed right
/// after the TLS handler, it sees the handshake's completion).
final class HandshakeDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let timeout: TimeAmount
    private var deadline = CloseTimer()

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        deadline.arm(context, in: timeout)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline.cancel()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event { deadline.cancel() }
        context.fireUserInboundEventTriggered(event)
    }
}

/// Closes a connection (an HTTP/2 stream) whose request has not arrived whole, head to end
/// of body, within `timeout` of its head: a body sent a byte at a time keeps the connection
/// from being idle, so the idle timeout alone never closes it.
final class RequestDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let timeout: TimeAmount
    private var deadline = CloseTimer()

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: deadline.arm(context, in: timeout)
        case .end: deadline.cancel()
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline.cancel()
    }
}

/// Closes a connection whose first request head has not arrived whole within `timeout` of
/// the connection's start (raw bytes trickled in keep it from being idle). Removed once the
/// head is in: `LiveUpgradeChannel` puts it in front of the WebSocket upgrade's handlers.
final class FirstHeadDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let timeout: TimeAmount
    private var deadline = CloseTimer()

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        deadline.arm(context, in: timeout)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline.cancel()
    }
}

/// A connection closed at a deadline, unless cancelled first (on its handler's event loop).
struct CloseTimer {
    private var scheduled: Scheduled<Void>?

    /// Closes the channel `timeout` from now (replacing any deadline set before).
    mutating func arm(_ context: ChannelHandlerContext, in timeout: TimeAmount) {
        let channel = context.channel
        scheduled?.cancel()
        scheduled = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }

    mutating func cancel() {
        scheduled?.cancel()
        scheduled = nil
    }
}

/// Closes its connection as soon as it is active: one over its address's share.
final class CloseOnArrival: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { context.close(promise: nil) }
    }

    func channelActive(context: ChannelHandlerContext) {
        context.close(promise: nil)
    }
}

/// Answers a request the HTTP parser refuses (a control byte in a header, an obs-folded
/// line, headers past the size limit) with a problem document, 431 for oversized headers
/// and 400 otherwise, then closes the connection. Hummingbird's own answer is an empty
/// 400. Errors after a request's head has gone on to the routes are left to them.
final class ParseErrorAnswer: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private var requestInProgress = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: requestInProgress = true
        case .end: requestInProgress = false
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? HTTPParserError, !requestInProgress else { return context.fireErrorCaught(error) }
        let problem = Self.problem(for: error)
        let body = problem.body
        let head = HTTPResponse(
            status: problem.status,
            headerFields: [.contentType: "application/problem+json", .contentLength: "\(body.count)", .connection: "close"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(ByteBuffer(bytes: body))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }

    /// The problem a parse error is: 431 for oversized headers, 400 otherwise.
    static func problem(for error: HTTPParserError) -> Problem {
        if case .headerOverflow = error {
            return Problem(.requestHeaderFieldsTooLarge, "Request headers too large", detail: "the request's headers are over 80 KiB together")
        }
        return Problem(.badRequest, "Malformed request", detail: "the request is not valid HTTP/1.1 (\(error))")
    }
}

/// `ParseErrorAnswer` for a connection's first request, which the WebSocket upgrade handler
/// reads before the routes' handlers are in place (in NIO's own HTTP/1 types).
final class FirstRequestParseErrorAnswer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private var headArrived = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) { headArrived = true }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? HTTPParserError, !headArrived else { return context.fireErrorCaught(error) }
        let problem = ParseErrorAnswer.problem(for: error)
        let body = problem.body
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/problem+json")
        headers.add(name: "Content-Length", value: "\(body.count)")
        headers.add(name: "Connection", value: "close")
        let head = HTTPResponseHead(
            version: .http1_1, status: HTTPResponseStatus(statusCode: Int(problem.status.code)), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}
