import HTTPTypes
import Hummingbird
import NIOCore

/// What the emulator answers a request: a status, its headers (content length included) and
/// a body it holds whole, written as it is by `EmulatorStreamHandler` on every listener. (As
/// a Hummingbird `Response` only for `EmulatorResponder.respond`, which Hummingbird's
/// `Application` requires and no listener calls.)
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
