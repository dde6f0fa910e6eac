import Foundation
import HTTPTypes
import HeraldCore
import HeraldLive
import Hummingbird
import HummingbirdCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket

/// HTTP/1.1 with the upgrade to the live channel's WebSocket (`GET /v1/live`, and the
/// console's `GET /console/live`).
///
/// Only a `GET` of one of those paths, with no body, may upgrade (`UpgradeGate`): any other
/// request that carries upgrade headers is an ordinary request, routed once like any other.
/// An upgrade request goes through the API's router like any request (authentication, rate
/// limits, metrics, the route's checks), with a slot the route fills when it accepts, and is
/// routed only that once: accepted, the connection becomes the socket; refused, the router's
/// answer (401, 429, 422…) is the request's answer.
struct LiveUpgradeChannel: ServerChildChannel, HTTPChannelHandler {
    enum Outcome: Sendable {
        case http(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        /// The socket runs on its channel's event loop (`LiveFrameHandler`), not in a task.
        case live(LiveSocket)
    }

    struct Value: ServerChildChannelValue {
        let outcome: EventLoopFuture<Outcome>
        let channel: any Channel
        /// The router's answer to an upgrade it refused: the first request's answer.
        let refusal: NIOLockedValueBox<Response?>
    }

    /// The paths that may become a socket.
    static let upgradePaths: Set<Substring> = ["/v1/live", "/console/live"]

    var responder: HTTPChannelHandler.Responder
    let configuration: HTTP1Channel.Configuration
    /// The API's router, asked whether an upgrade request may become a socket.
    let preflight: @Sendable (Request, APIContext) async throws -> Response
    let hub: LiveHub
    /// Behind TLS (`LiveTLSChannel`): requests are https.
    var isTLS = false

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let accepted = NIOLockedValueBox<LivePlan?>(nil)
            let refusal = NIOLockedValueBox<Response?>(nil)
            let preflight = self.preflight
            let isTLS = self.isTLS
            let upgrader = NIOTypedWebSocketServerUpgrader<Outcome>(
                maxFrameSize: hub.settings.maxFrameBytes,
                shouldUpgrade: { channel, head in
                    let promise = channel.eventLoop.makePromise(of: HTTPHeaders?.self)
                    promise.completeWithTask {
                        guard let request = try? HTTPRequest(head, secure: isTLS, splitCookie: false) else { return nil }
                        let slot = LiveUpgradeSlot(hub: hub)
                        var context = APIContext(source: .init(channel: channel, logger: logger))
                        context.liveUpgrade = slot
                        let response = try await preflight(Request(head: request, body: .init(buffer: ByteBuffer())), context)
                        guard response.status == .ok, let plan = slot.plan else {
                            refusal.withLockedValue { $0 = response }
                            return nil
                        }
                        accepted.withLockedValue { $0 = plan }
                        return HTTPHeaders()
                    }
                    // Accepted: the first request's handlers leave now, on the event loop, before
                    // NIO takes the request decoder out. That decoder hands on the bytes behind the
                    // request (a frame the app wrote with it) as raw bytes, which these handlers,
                    // typed for HTTP parts, must never see: they trapped on them.
                    return promise.futureResult.map { headers in
                        if headers != nil { Self.removeFirstRequestHandlers(from: channel.pipeline.syncOperations) }
                        return headers
                    }
                },
                upgradePipelineHandler: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        guard let plan = accepted.withLockedValue({ $0 }) else { throw ChannelError.inappropriateOperationForState }
                        let socket = hub.socket(for: plan, on: WebSocketConnection(channel: channel))
                        try channel.pipeline.syncOperations.addHandler(LiveFrameHandler(socket: socket, hub: hub))
                        // Gone before the handler was there to hear it: nothing to register.
                        guard channel.isActive else { throw ChannelError.ioOnClosedChannel }
                        hub.register(socket, plan: plan)
                        return .live(socket)
                    }
                })
            let upgrade = NIOTypedHTTPServerUpgradeConfiguration<Outcome>(
                upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        if let deadline = try? pipeline.handler(type: FirstHeadDeadline.self) { pipeline.removeHandler(deadline, promise: nil) }
                        if let answer = try? pipeline.handler(type: FirstRequestParseErrorAnswer.self) {
                            pipeline.removeHandler(answer, promise: nil)
                        }
                        try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: isTLS))
                        try pipeline.addHandlers(configuration.additionalChannelHandlers())
                        try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: configuration.idleTimeout.map { .init($0) }, logger: logger))
                        let http = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                            wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                        // NIO keeps no copy of a refused upgrade request's head, nor of its end
                        // when it came while the upgrade was being decided: they go to the routes
                        // from here (anything after them, NIO replays).
                        if let keeper = try? pipeline.handler(type: UpgradeGate.self), let head = keeper.head,
                            let upgrader = try? pipeline.context(handlerType: NIOTypedHTTPServerUpgradeHandler<Outcome>.self)
                        {
                            upgrader.fireChannelRead(NIOAny(HTTPServerRequestPart.head(head)))
                            if keeper.sawEnd { upgrader.fireChannelRead(NIOAny(HTTPServerRequestPart.end(nil))) }
                            upgrader.fireChannelReadComplete()
                        }
                        return .http(http)
                    }
                })
            var pipeline = NIOUpgradableHTTPServerPipelineConfiguration<Outcome>(upgradeConfiguration: upgrade)
            pipeline.enablePipelining = false
            pipeline.enableErrorHandling = false
            pipeline.enableResponseHeaderValidation = false
            pipeline.decoderConfiguration.maxHeaderFieldSize = configuration.httpDecoder.maxHeaderFieldSize
            pipeline.decoderConfiguration.maxHeaderListSize = configuration.httpDecoder.maxHeaderListSize
            pipeline.decoderConfiguration.maxHeaderFieldCount = configuration.httpDecoder.maxHeaderFieldCount
            // Until the first request's head is whole, nothing else times a connection out.
            if let idle = configuration.idleTimeout {
                try channel.pipeline.syncOperations.addHandler(FirstHeadDeadline(timeout: idle), position: .first)
            }
            let outcome = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(configuration: pipeline)
            let upgradeHandler = try channel.pipeline.syncOperations.handler(type: NIOTypedHTTPServerUpgradeHandler<Outcome>.self)
            try channel.pipeline.syncOperations.addHandler(FirstRequestParseErrorAnswer(), position: .before(upgradeHandler))
            try channel.pipeline.syncOperations.addHandler(UpgradeGate(), position: .before(upgradeHandler))
            return Value(outcome: outcome, channel: channel, refusal: refusal)
        }
    }

    /// The handlers that serve only the connection's first request (its deadline, its parse
    /// errors, the head a refused upgrade replays), gone once the upgrade is accepted.
    static func removeFirstRequestHandlers(from pipeline: ChannelPipeline.SynchronousOperations) {
        if let deadline = try? pipeline.handler(type: FirstHeadDeadline.self) { pipeline.removeHandler(deadline, promise: nil) }
        if let keeper = try? pipeline.handler(type: UpgradeGate.self) { pipeline.removeHandler(keeper, promise: nil) }
        if let answer = try? pipeline.handler(type: FirstRequestParseErrorAnswer.self) { pipeline.removeHandler(answer, promise: nil) }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.outcome.get() {
            case .http(let http):
                guard let refused = value.refusal.withLockedValue({ $0 }) else { return await handleHTTP(asyncChannel: http, logger: logger) }
                // The refused upgrade's request comes round again (NIO hands it on as an
                // ordinary one): it is answered with what the router said, not routed twice.
                var handler = self
                let routes = responder
                let first = NIOLockedValueBox<Response?>(refused)
                handler.responder = { request, writer, channel in
                    guard
                        var answer = first.withLockedValue({ answer in
                            defer { answer = nil }
                            return answer
                        })
                    else {
                        return try await routes(request, writer, channel)
                    }
                    answer.headers[.date] = HTTPDate.text(Date())
                    answer.headers[.server] = "herald"
                    try await writer.write(response: answer.head, body: answer.body)
                }
                await handler.handleHTTP(asyncChannel: http, logger: logger)
            case .live: break
            }
        } catch {
            // No channel took the connection over (an upgrade that failed after its 101, such
            // as one whose request had a body): nothing else would ever close it.
            logger.debug("connection ended before its first request", metadata: ["error": "\(error)"])
            try? await value.channel.close()
        }
    }
}

/// Where a route that may become a live socket (`/v1/live`, the console's `/console/live`)
/// leaves an accepted upgrade's plan; present only on an upgrade request.
public final class LiveUpgradeSlot: Sendable {
    private let box = NIOLockedValueBox<LivePlan?>(nil)
    let hub: LiveHub

    init(hub: LiveHub) {
        self.hub = hub
    }

    var plan: LivePlan? { box.withLockedValue { $0 } }

    func accept(_ plan: LivePlan) {
        box.withLockedValue { $0 = plan }
    }

    /// Accepts the upgrade as a socket of `person`, from the feed's head, for a route that has
    /// authenticated them itself. - Throws: the route's problem when the person or the server
    /// holds as many sockets as it may.
    /// - Parameter consoleSession: the console session it opens in, which closes it when it ends.
    public func admit(tenant: Tenant, person: Person, credentialID: UUID, consoleSession: UUID?) async throws {
        try hub.checkRoom(for: person)
        let (head, horizon) = try await hub.positions()
        accept(
            LivePlan(
                tenant: tenant, person: person, credentialID: credentialID, consoleSession: consoleSession, after: nil, device: nil, head: head,
                horizon: horizon))
    }
}

extension LiveHub {
    /// Refuses a socket over its person's or this server's share, before the upgrade: 503 with
    /// `Retry-After` when the server is full (or stopping), 429 when the person is.
    func checkRoom(for person: Person) throws {
        switch admission(of: person.id) {
        case .admitted:
            return
        case .serverFull:
            var problem = Problem(
                .serviceUnavailable, "Live channel full", detail: "this server holds as many sockets as it may; try another, or again soon")
            problem.headers[.retryAfter] = "5"
            throw problem
        case .personFull(let limit):
            throw Problem(.tooManyRequests, "Too many sockets", detail: "\(person.email) holds \(limit) live sockets already; close one first")
        }
    }
}

/// Decides whether the first request may upgrade at all: only a `GET` of a path that may
/// become a socket, with no body. Any other request loses its `Upgrade` header here, so that
/// NIO hands it on as the ordinary request it is (NIO would otherwise fail an upgrade request
/// that has a body, leaving it unanswered). Keeps the head of a request that may upgrade: NIO
/// drops it if the upgrade is refused, and the request must still be answered.
final class UpgradeGate: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    private(set) var head: HTTPRequestHead?
    /// Whether that request's end came (a GET's comes with its head).
    private(set) var sawEnd = false
    private var first = true

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(var head) where first:
            first = false
            guard !head.headers[canonicalForm: "upgrade"].isEmpty else { break }
            if Self.mayUpgrade(head) {
                self.head = head
            } else {
                head.headers.remove(name: "upgrade")
                context.fireChannelRead(wrapInboundOut(.head(head)))
                return
            }
        case .end where head != nil && !sawEnd:
            sawEnd = true
        default:
            break
        }
        context.fireChannelRead(data)
    }

    /// A `GET` of `/v1/live` or `/console/live` (any query), with no body.
    static func mayUpgrade(_ head: HTTPRequestHead) -> Bool {
        guard head.method == .GET, head.headers["transfer-encoding"].isEmpty else { return false }
        guard head.headers["content-length"].allSatisfy({ $0.trimmingCharacters(in: .whitespaces) == "0" }) else { return false }
        let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return LiveUpgradeChannel.upgradePaths.contains(path)
    }
}
