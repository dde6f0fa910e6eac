import HTTPTypes
import Hummingbird
import NIOCore

/// What the emulator answers a request: a status, its headers (content length included) and
/// a body it holds whole. Written as it is on an HTTP/2 stream (`EmulatorStreamHandler`), or
/// handed to Hummingbird as a `Response` on the HTTP/1.1 and h2c listeners.
struct EmulatorAnswer: Sendable {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var body: ByteBuffer

    var head: HTTPResponse { HTTPResponse(status: status, headerFields: headers) }
}

extension Response {
    init(_ answer: EmulatorAnswer) {
        self.init(status: answer.status, headers: answer.headers, body: .init(byteBuffer: answer.body))
    }
}
