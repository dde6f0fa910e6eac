#if os(Linux) && NIOTransports
    import Foundation
    import NIOCore
    import NIOHTTP1

    /// One request for a pooled connection, and where its answer goes.
    struct PooledExchange: Sendable {
        var head: HTTPRequestHead
        var body: Data?
        var answer: EventLoopPromise<PooledAnswer>
    }

    /// An answer, and whether the connection may carry another request.
    struct PooledAnswer: Sendable {
        var response: HTTPResponseData
        var keepAlive: Bool
    }

    /// Why an exchange got no whole answer on its connection.
    struct ExchangeFailure: Error, Sendable, CustomStringConvertible {
        /// Whether any of the answer had arrived: then the request surely reached the server.
        var answerStarted: Bool
        var description: String
    }

    /// HTTP/1.1 on one kept-alive connection, one exchange at a time. Once it has an exchange,
    /// it completes its answer exactly once: with the whole answer, or failed when the
    /// connection ends first (the transport's deadline closes it).
    final class PooledHTTPHandler: ChannelDuplexHandler {
        typealias InboundIn = HTTPClientResponsePart
        typealias OutboundIn = PooledExchange
        typealias OutboundOut = HTTPClientRequestPart

        private var waiting: EventLoopPromise<PooledAnswer>?
        private var head: HTTPResponseHead?
        private var body = ByteBuffer()

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            let exchange = unwrapOutboundIn(data)
            // The answer is this handler's from here on; the write's own promise only says so.
            promise?.succeed(())
            guard waiting == nil else {
                exchange.answer.fail(ExchangeFailure(answerStarted: false, description: "the connection is busy"))
                return
            }
            waiting = exchange.answer
            head = nil
            body.clear()
            context.write(wrapOutboundOut(.head(exchange.head)), promise: nil)
            if let data = exchange.body, !data.isEmpty {
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: data)))), promise: nil)
            }
            // A write that fails closes the connection: `channelInactive` fails the answer.
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
            case .body(var chunk):
                body.writeBuffer(&chunk)
            case .end:
                guard let waiting, let head else {
                    // An answer nobody asked for: the connection cannot be trusted.
                    context.close(promise: nil)
                    return
                }
                var headers: [String: String] = [:]
                for (name, value) in head.headers { headers[name.lowercased()] = value }
                let response = HTTPResponseData(status: Int(head.status.code), headers: headers, body: Data(body.readableBytesView))
                self.waiting = nil
                self.head = nil
                body.clear()
                waiting.succeed(PooledAnswer(response: response, keepAlive: head.isKeepAlive))
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            fail("the connection closed before the answer ended")
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            fail("\(error)")
            context.close(promise: nil)
        }

        private func fail(_ why: String) {
            guard let waiting else { return }
            self.waiting = nil
            waiting.fail(ExchangeFailure(answerStarted: head != nil, description: why))
        }
    }
#endif
