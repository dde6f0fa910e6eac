import Crypto
import Foundation
import HTTPTypes
import HeraldStore
import Hummingbird

extension HTTPField.Name {
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    static let idempotentReplayed = HTTPField.Name("Idempotent-Replayed")!
}

extension HeraldAPI {
    /// A JSON body with its keys sorted and its spacing dropped, so that the same request
    /// serialized another way is the same request; anything else as it is.
    static func canonical(_ bytes: [UInt8]) -> Data {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]),
            let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
        else { return Data(bytes) }
        return data
    }

    /// Runs a creating `POST` (its body read once). With an `Idempotency-Key`, the first
    /// answer is kept for 24 hours per credential and acting person: the same key with the same method, path
    /// and body gets it again (`Idempotent-Replayed: true`) and writes nothing; with another
    /// request it is 422; while the first is still being answered, 409 with `Retry-After`.
    /// A request that fails lets its key go.
    func creating(_ request: Request, _ context: APIContext, _ handle: @Sendable (Caller, [UInt8]) async throws -> Answer) async throws -> Response {
        let caller = try context.requireCaller()
        let bytes = try await JSONBody.collect(request, context: context)
        guard let key = request.headers[.idempotencyKey] else { return try await handle(caller, bytes).response }
        guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw Problem(.badRequest, "Invalid header", detail: "Idempotency-Key is 1 to 255 visible ASCII characters")
        }
        var hasher = SHA256()
        hasher.update(data: Data("\(request.method.rawValue) \(request.uri.path)\n".utf8))
        hasher.update(data: Self.canonical(bytes))
        let hash = Data(hasher.finalize())
        let claim = try await store.withTenant(caller.tenant) {
            try await $0.claimIdempotencyKey(key, credential: caller.credentialID, person: caller.person?.id, requestHash: hash)
        }
        switch claim {
        case .answered(let status, let headers, let body):
            var response = Answer(status: status, headers: headers, body: body).response
            response.headers[.idempotentReplayed] = "true"
            return response
        case .otherRequest:
            throw Problem(
                .unprocessableContent, "Idempotency-Key reused", detail: "this Idempotency-Key was used for another request in the last 24 hours")
        case .inProgress:
            var problem = Problem(.conflict, "Request in progress", detail: "a request with this Idempotency-Key is being answered; retry shortly")
            problem.headers[.retryAfter] = "1"
            throw problem
        case .claimed:
            do {
                let answer = try await handle(caller, bytes)
                try await store.withTenant(caller.tenant) {
                    try await $0.completeIdempotencyKey(
                        key, credential: caller.credentialID, person: caller.person?.id, status: answer.status, headers: answer.headers,
                        body: answer.body)
                }
                return answer.response
            } catch {
                try? await store.withTenant(caller.tenant) {
                    try await $0.releaseIdempotencyKey(key, credential: caller.credentialID, person: caller.person?.id)
                }
                throw error
            }
        }
    }
}
