import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// URLSession for both, with its connection reuse and the system's proxy and TLS settings: the
// transports of Apple platforms. They compile on Linux too, against FoundationNetworking (the
// same API), so that every line an iPhone app compiles is compiled on the project's machines;
// there the WebSocket needs a libcurl built with WebSocket support (Debian's is not), so Linux
// uses SwiftNIO's (the trait `NIOTransports`). Their logic is in the shared, tested parts: the
// transports only carry bytes.

/// HTTP through `URLSession`.
public struct URLSessionHTTPTransport: HTTPTransport {
    let session: URLSession
    public init(session: URLSession = .shared) { self.session = session }

    public func send(_ request: HTTPRequestData, to server: URL, timeout: Duration) async throws -> HTTPResponseData {
        guard let url = URL(string: request.target, relativeTo: server)?.absoluteURL else {
            throw HeraldError.transport("not a path: \(request.target)")
        }
        var urlRequest = URLRequest(url: url, timeoutInterval: timeout.seconds)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.addValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        do {
            let (data, response) = try await session.data(for: urlRequest)
            guard let http = response as? HTTPURLResponse else { throw HeraldError.transport("not an HTTP answer") }
            var headers: [String: String] = [:]
            for (name, value) in http.allHeaderFields {
                if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
            }
            return HTTPResponseData(status: http.statusCode, headers: headers, body: data)
        } catch let error as HeraldError {
            throw error
        } catch {
            throw HeraldError.transport(TransportFailure(error.localizedDescription, underlying: error))
        }
    }
}

/// The WebSocket through `URLSessionWebSocketTask`.
public struct URLSessionWebSocketTransport: WebSocketTransport {
    let session: URLSession
    public init(session: URLSession = .shared) { self.session = session }

    public func connect(to url: URL, headers: [(name: String, value: String)], timeout: Duration) async throws -> any WebSocketConnection {
        var request = URLRequest(url: url, timeoutInterval: timeout.seconds)
        for (name, value) in headers { request.addValue(value, forHTTPHeaderField: name) }
        let task = session.webSocketTask(with: request)
        task.maximumMessageSize = 1 << 20
        task.resume()
        let connection = URLSessionWebSocketConnection(task: task)
        // The first message (hello) proves the upgrade; a refusal fails it with the
        // HTTP answer on the task.
        do {
            let first = try await task.receive()
            connection.keep(first)
        } catch {
            if let http = task.response as? HTTPURLResponse, http.statusCode != 101 {
                let retryAfter = (http.value(forHTTPHeaderField: "Retry-After")).flatMap { Int($0) }
                let body = await Self.refusalBody(of: url, headers: headers, status: http.statusCode, session: session, timeout: timeout)
                throw WebSocketRefusal.status(http.statusCode, retryAfter: retryAfter, body: body)
            }
            throw WebSocketRefusal.transport(error.localizedDescription)
        }
        return connection
    }

    /// The problem document of a refused upgrade, which `URLSessionWebSocketTask` does not keep:
    /// the same request as a plain `GET` (Herald checks it the same way: the credential, `after`,
    /// `device`, the room; and answers 426 to one it would have upgraded), read when its answer
    /// has the refusal's status. Empty otherwise, as before.
    static func refusalBody(of url: URL, headers: [(name: String, value: String)], status: Int, session: URLSession, timeout: Duration) async -> Data
    {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return Data() }
        components.scheme = components.scheme?.lowercased() == "wss" ? "https" : "http"
        guard let plain = components.url else { return Data() }
        var request = URLRequest(url: plain, timeoutInterval: timeout.seconds)
        for (name, value) in headers { request.addValue(value, forHTTPHeaderField: name) }
        guard let (data, response) = try? await session.data(for: request), (response as? HTTPURLResponse)?.statusCode == status else {
            return Data()
        }
        return data
    }
}

final class URLSessionWebSocketConnection: WebSocketConnection, @unchecked Sendable {
    private let task: URLSessionWebSocketTask
    private let lock = NSLock()
    private var first: URLSessionWebSocketTask.Message?

    init(task: URLSessionWebSocketTask) { self.task = task }

    func keep(_ message: URLSessionWebSocketTask.Message) { lock.withLock { first = message } }

    func receive() async throws -> WebSocketIncoming {
        let kept: URLSessionWebSocketTask.Message? = lock.withLock {
            defer { first = nil }
            return first
        }
        do {
            let message: URLSessionWebSocketTask.Message
            if let kept { message = kept } else { message = try await task.receive() }
            switch message {
            case .string(let text): return .text(text)
            case .data(let data): return .text(String(decoding: data, as: UTF8.self))
            @unknown default: return .text("")
            }
        } catch {
            let code = task.closeCode.rawValue
            return .closed(code: code == 0 ? 1006 : code)
        }
    }

    func send(text: String) async throws { try await task.send(.string(text)) }

    func close(code: Int) async {
        task.cancel(with: URLSessionWebSocketTask.CloseCode(rawValue: code) ?? .normalClosure, reason: nil)
    }
}
