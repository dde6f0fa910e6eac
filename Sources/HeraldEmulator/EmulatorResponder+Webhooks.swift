import Foundation
import HTTPTypes
import NIOCore

extension EmulatorResponder {
    /// `POST /webhooks/{anything}`: a receiver of Standard Webhooks (docs/webhooks.md) for
    /// benchmarks, answering 204 at once. It checks that the three headers are there (not the
    /// signature: it holds no secret) and counts each `webhook-id`, so that a bench sees a
    /// message that arrived twice.
    static func isWebhook(_ path: String) -> Bool { path.hasPrefix("/webhooks/") }

    func webhook(_ headers: HTTPFields) -> EmulatorAnswer {
        let names = ["webhook-id", "webhook-timestamp", "webhook-signature"].compactMap { HTTPField.Name($0) }
        guard names.allSatisfy({ headers[$0] != nil }), let id = names.first.flatMap({ headers[$0] }) else {
            return json(400, Data(#"{"error": "a webhook carries webhook-id, webhook-timestamp and webhook-signature"}"#.utf8))
        }
        emulator.state.recordWebhook(id: id)
        return EmulatorAnswer(status: .noContent, headers: [:], body: ByteBuffer())
    }
}
