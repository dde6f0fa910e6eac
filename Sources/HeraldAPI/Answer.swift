import HTTPTypes
import Hummingbird

/// A response as bytes: what a creating request answers, kept for `Idempotency-Key`.
struct Answer: Sendable {
    let status: Int
    let headers: [String: String]
    let body: [UInt8]

    var response: Response {
        var fields = HTTPFields()
        for (name, value) in headers {
            if let name = HTTPField.Name(name) { fields[name] = value }
        }
        return Response(status: .init(code: status), headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
