import HeraldHTTP

extension DeliveryOutcome {
    /// No answer at all. A request that never left is worth a retry: a TLS failure counts
    /// too (it is the endpoint — a certificate changed, a proxy in the way — not the sender's
    /// credentials, and it clears when the endpoint or the CA file is put right; the worker
    /// rereads the CA file). One that left may have been taken: `unanswered`, unless it was
    /// not the push itself (`isThePush`: the OAuth token's request).
    public static func transport(_ error: HTTPClientError, what: String, isThePush: Bool = true) -> DeliveryOutcome {
        switch error.kind {
        case .tls: .retry(after: nil, reason: "TLS with \(what) failed: \(error.message)")
        case .badURL: .badRequest(reason: "\(what) cannot be reached at that URL: \(error.message)")
        default:
            error.requestSent && isThePush
                ? .unanswered(reason: "\(what) sent no answer: \(error.message)") : .retry(after: nil, reason: "\(what): \(error.message)")
        }
    }
}
