/// One request's state in the HTTP/2 loop: what to send, what came back, and where it is.
///
/// Safety (`@unchecked Sendable`): the caller creates it and hands it to the loop thread
/// through the loop's locked queue; from then on only the loop thread touches it. When the
/// queue refuses it, the caller alone still holds it.
final class H2Exchange: @unchecked Sendable {
    let id: Int
    let request: HTTPRequest
    let target: RequestTarget
    /// When the request has taken its whole timeout (monotonic nanoseconds).
    let deadline: UInt64
    private var continuation: CheckedContinuation<HTTPResponse, any Error>?
    /// The stream it was submitted as, on `connection`; nil while it waits for a connection.
    var streamID: Int32?
    var connection: H2Connection?
    /// Whether its HEADERS frame left: until then no server has seen it, and it may be
    /// sent again on another connection.
    var headersSent = false
    /// Times it was moved to another connection unsent (a refused stream, a connection
    /// lost before the request left).
    var moves = 0
    /// How much of the body nghttp2 has taken.
    var bodyOffset = 0
    var status = 0
    var headers: [String: String] = [:]
    var body: [UInt8] = []

    init(id: Int, request: HTTPRequest, target: RequestTarget, deadline: UInt64, continuation: CheckedContinuation<HTTPResponse, any Error>) {
        self.id = id
        self.request = request
        self.target = target
        self.deadline = deadline
        self.continuation = continuation
    }

    func finish(_ result: Result<HTTPResponse, any Error>) {
        var result = result
        if headersSent, case .failure(var error as HTTPClientError) = result {
            error.requestSent = true
            result = .failure(error)
        }
        continuation?.resume(with: result)
        continuation = nil
        connection = nil
    }

    /// A response header; `:status` of an informational (1xx) answer starts the headers over.
    func receiveHeader(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        if name.first == UInt8(ascii: ":") {
            if name.elementsEqual(":status".utf8) {
                status = Int(String(decoding: value, as: UTF8.self)) ?? 0
                headers = [:]
            }
            return
        }
        let name = String(decoding: name, as: UTF8.self)
        let value = String(decoding: value, as: UTF8.self)
        headers[name] = headers[name].map { $0 + ", " + value } ?? value
    }

    var response: HTTPResponse { HTTPResponse(status: status, headers: headers, body: body, httpVersion: "2") }
}
