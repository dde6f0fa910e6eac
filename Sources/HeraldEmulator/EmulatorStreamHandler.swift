import Foundation
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// One HTTP/2 stream, or one HTTP/1.1 connection's requests in turn, served on its event
/// loop: each request read whole, then answered whole (after the injected latency, for a send).
///
/// The emulator stands in for FCM and APNs, which Herald's benchmarks share two cores with;
/// what it spends a request is taken from what Herald gets. Served as an async channel, each
/// stream was a task of its own, its parts passed through async sequences and each write
/// awaited: that machinery cost more than the answer. Every endpoint's work is now a few steps
/// under the state's lock (`EmulatorResponder.answer`), done where the request's last frame
/// was read.
final class EmulatorStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    private let responder: EmulatorResponder
    private var head: HTTPRequest?
    private var body: ByteBuffer?
    private var answered = false
    /// Set once the stream is gone (closed or reset): a late answer is then dropped.
    private var removed = false

    init(responder: EmulatorResponder) {
        self.responder = responder
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !answered else { return }
        switch unwrapInboundIn(data) {
        case .head(let request):
            head = request
        case .body(var chunk):
            guard (body?.readableBytes ?? 0) + chunk.readableBytes <= EmulatorResponder.maximumBody else {
                // As Hummingbird's `collect(upTo:)` did: a body past the limit ends the stream.
                answered = true
                context.close(promise: nil)
                return
            }
            if body == nil { body = chunk } else { body?.writeBuffer(&chunk) }
        case .end:
            answered = true
            respond(context: context)
        }
    }

    private func respond(context: ChannelHandlerContext) {
        // The path without its query, as the other listeners route by (Hummingbird's `uri.path`).
        guard let head, let path = head.path.map({ String($0.prefix { $0 != "?" }) }) else {
            context.close(promise: nil)
            return
        }
        let bytes = body.map { Data(buffer: $0) } ?? Data()
        let faults = responder.emulator.state.faults
        let wait = responder.delay(method: head.method, path: path, faults: faults)
        guard wait > .zero else {
            write(responder.answer(method: head.method, path: path, headers: head.headerFields, body: bytes, faults: faults), context: context)
            return
        }
        let responder = responder
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: TimeAmount(wait)) {
            // Answered (and a send recorded) even if the client gave up meanwhile, as a
            // provider that got the request does; only the writing is skipped then.
            let answer = responder.answer(method: head.method, path: path, headers: head.headerFields, body: bytes, faults: faults)
            let (handler, context) = loopBound.value
            guard !handler.removed else { return }
            handler.write(answer, context: context)
        }
    }

    private func write(_ answer: EmulatorAnswer, context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(answer.head)), promise: nil)
        if answer.body.readableBytes > 0 { context.write(wrapOutboundOut(.body(answer.body)), promise: nil) }
        // The stream closes by itself once the end has left (both sides ended). Closing it here
        // instead would reset it with CANCEL while a large answer (the message list of a long
        // bench) still sits in its buffers.
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        // An HTTP/1.1 connection carries the next request (one at a time: NIO's pipelining
        // assistance holds the next until this answer's end has left); a stream has no next.
        (head, body, answered) = (nil, nil, false)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        removed = true
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
