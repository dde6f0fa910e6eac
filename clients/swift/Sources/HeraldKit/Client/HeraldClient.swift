import Foundation

/// The REST API an app uses, typed (docs/api.md). Every refusal is a `HeraldError` made from
/// the server's problem document.
public struct HeraldClient: Sendable {
    public struct Configuration: Sendable {
        /// The server's address (`https://herald.example.com`), and others to fall back to, in
        /// order, when one cannot be reached (as Ably's fallback hosts).
        public var servers: [URL]
        /// A person token (`hrp_…`), or a tenant key (`hrk_…`) with `onBehalfOf`; empty when
        /// `tokenProvider` gives the first one.
        public var token: String
        /// Asked for a token when there is none yet, and again when the server refuses the one
        /// it gave (401): requests, the live session and the outbox go on with the new one.
        public var tokenProvider: TokenProvider?
        public var onBehalfOf: String?
        /// How long a request may take.
        public var timeout: Duration
        public var transport: any HTTPTransport
        public var webSocketTransport: any WebSocketTransport

        public init(
            servers: [URL], token: String = "", tokenProvider: TokenProvider? = nil, onBehalfOf: String? = nil, timeout: Duration = .seconds(30),
            transport: any HTTPTransport = PlatformTransports.http, webSocketTransport: any WebSocketTransport = PlatformTransports.webSocket
        ) {
            self.servers = servers
            self.token = token
            self.tokenProvider = tokenProvider
            self.onBehalfOf = onBehalfOf
            self.timeout = timeout
            self.transport = transport
            self.webSocketTransport = webSocketTransport
        }
    }

    public let configuration: Configuration
    /// Which of `servers` answered last: the next request goes there first.
    let serverIndex = Locked(0)
    /// The token sent now (shared by the copies of this client, its session and its outbox).
    let tokens: TokenKeeper

    public init(_ configuration: Configuration) {
        precondition(!configuration.servers.isEmpty, "HeraldClient needs at least one server")
        self.configuration = configuration
        tokens = TokenKeeper(token: configuration.token, provider: configuration.tokenProvider)
    }

    public init(server: URL, token: String) { self.init(Configuration(servers: [server], token: token)) }

    /// A client whose tokens come from the app's backend (`TokenProvider`).
    public init(server: URL, tokenProvider: @escaping TokenProvider) {
        self.init(Configuration(servers: [server], tokenProvider: tokenProvider))
    }

    /// The server requests go to now.
    public var currentServer: URL { configuration.servers[serverIndex.current % configuration.servers.count] }

    /// After a server could not be reached: the next one.
    func moveOn(from server: URL) {
        serverIndex.withLock { index in
            if configuration.servers[index % configuration.servers.count] == server { index = (index + 1) % configuration.servers.count }
        }
    }

    func credentialHeaders(token: String) -> [(name: String, value: String)] {
        var headers = [(name: "Authorization", value: "Bearer \(token)")]
        if let person = configuration.onBehalfOf { headers.append((name: "Herald-On-Behalf-Of", value: person)) }
        return headers
    }

    /// Sends one request with the current token; refused with 401, once more with the
    /// provider's next token (the server did nothing with the refused one). A provider that
    /// fails leaves the 401 as the answer.
    func send(_ method: String, _ target: String, body: Data? = nil, headers: [(name: String, value: String)] = []) async throws -> HTTPResponseData {
        let token = try await tokens.current()
        let response = try await send(method, target, body: body, headers: headers, token: token)
        guard response.status == 401, tokens.renews, let renewed = try? await tokens.renew(refused: token), renewed != token else {
            return response
        }
        return try await send(method, target, body: body, headers: headers, token: renewed)
    }

    /// Sends one request; tries the next server when one cannot be reached. A `POST` or `PATCH`
    /// is not sent again (it may have arrived before the connection broke): the error is thrown,
    /// and the next call goes to the next server.
    private func send(
        _ method: String, _ target: String, body: Data?, headers: [(name: String, value: String)], token: String
    ) async throws -> HTTPResponseData {
        var request = HTTPRequestData(method: method, target: target, headers: credentialHeaders(token: token) + headers, body: body)
        request.headers.append((name: "Accept", value: "application/json"))
        if body != nil { request.headers.append((name: "Content-Type", value: "application/json")) }
        var lastError: (any Error)?
        for _ in configuration.servers.indices {
            let server = currentServer
            do {
                return try await configuration.transport.send(request, to: server, timeout: configuration.timeout)
            } catch HeraldError.transport(let why) {
                lastError = HeraldError.transport(why)
                moveOn(from: server)
                if method == "POST" || method == "PATCH" { break }
            }
        }
        throw lastError ?? HeraldError.transport("no server")
    }

    /// A request whose success is `expected`, decoded as `Answer`.
    func call<Answer: Decodable>(
        _ method: String, _ target: String, json: (any Encodable)? = nil, headers: [(name: String, value: String)] = [],
        as: Answer.Type = Answer.self
    ) async throws -> (Answer, HTTPResponseData) {
        let response = try await succeeded(method, target, json: json, headers: headers)
        do {
            return (try JSONCoding.decoder.decode(Answer.self, from: response.body), response)
        } catch {
            throw HeraldError.unexpectedAnswer("\(method) \(target): \(error)")
        }
    }

    /// A request whose answer's body the app does not need.
    func perform(_ method: String, _ target: String, json: (any Encodable)? = nil) async throws {
        _ = try await succeeded(method, target, json: json)
    }

    /// Sends `json` (if any); a refusal is thrown as the `HeraldError` of its problem document.
    private func succeeded(
        _ method: String, _ target: String, json: (any Encodable)?, headers: [(name: String, value: String)] = []
    ) async throws -> HTTPResponseData {
        let body = try json.map { try JSONCoding.encoder.encode($0) }
        let response = try await send(method, target, body: body, headers: headers)
        guard (200...299).contains(response.status) else {
            throw HeraldError.from(status: response.status, retryAfter: response.headers["retry-after"].flatMap { Int($0) }, body: response.body)
        }
        return response
    }

    /// `GET /v1/me`: the tenant, the credential, the person it acts as.
    public func me() async throws -> Me { try await call("GET", "/v1/me").0 }
}

/// `{items: [...]}`, as lists are answered.
struct Items<Item: Decodable>: Decodable {
    var items: [Item]
}

/// Percent-encodes a path segment or query value.
func escaped(_ text: String) -> String {
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._~@")
    return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
}

/// The query string of `parameters` that have a value (`?a=1&b=2`, or nothing).
func query(_ parameters: [(String, String?)]) -> String {
    let pairs = parameters.compactMap { name, value in value.map { "\(name)=\(escaped($0))" } }
    return pairs.isEmpty ? "" : "?" + pairs.joined(separator: "&")
}

/// The `cursor` of a `Link: <…>; rel="next"` header.
func nextCursor(_ link: String?) -> String? {
    guard let link, let start = link.firstIndex(of: "<"), let end = link.firstIndex(of: ">"), start < end,
        link[end...].contains("rel=\"next\"")
    else { return nil }
    let target = String(link[link.index(after: start)..<end])
    return URLComponents(string: target)?.queryItems?.first { $0.name == "cursor" }?.value
}
