import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird

extension HTTPField.Name {
    /// Names the person a tenant key acts for.
    static let onBehalfOf = HTTPField.Name("Herald-On-Behalf-Of")!
    static let link = HTTPField.Name("Link")!
}

/// Finds who calls from `Authorization: Bearer …`: a person token acts as its person; a
/// tenant key acts as itself (an admin), or as the person `Herald-On-Behalf-Of` names. Any
/// failure is a 401 that says why, with `WWW-Authenticate`.
///
/// Requests without valid credentials are counted per client address (`FailedAttempts`);
/// an address over its share gets 429 before its credentials are looked up.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = APIContext
    let store: Store
    /// Where a secret seen in the last few seconds is answered from.
    let credentials: CredentialCache
    let attempts: FailedAttempts

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        let address = attempts.address(of: request, context: context)
        if let wait = attempts.wait(for: address) { throw Problem.tooManyAttempts(wait) }
        var context = context
        do {
            context.caller = try await caller(of: request)
        } catch let problem as Problem where problem.status == .unauthorized {
            attempts.record(address)
            throw problem
        } catch let failure as AuthenticationFailure {
            attempts.record(address)
            throw failure
        }
        return try await next(request, context)
    }

    /// Who the request's credentials say calls.
    private func caller(of request: Request) async throws -> Caller {
        // Browsers cannot set Authorization on a WebSocket: the live channel takes a ticket.
        if request.headers[.authorization] == nil, request.uri.path == "/v1/live", let ticket = request.uri.queryParameters.get("ticket") {
            let authentication = try await store.redeemLiveTicket(ticket)
            return Caller(
                tenant: authentication.tenant, credentialID: authentication.credentialID, kind: authentication.kind, person: authentication.person)
        }
        guard let header = request.headers[.authorization] else {
            throw Problem.noCredentials("send Authorization: Bearer followed by a person token or a tenant key")
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw Problem.noCredentials("the Authorization header must be Bearer followed by a person token or a tenant key")
        }
        let authentication = try await credentials.authenticate(String(parts[1]).trimmingCharacters(in: .whitespaces))
        let onBehalfOf = request.headers[.onBehalfOf]
        var person: Person?
        switch authentication.kind {
        case .personToken:
            guard onBehalfOf == nil else {
                throw Problem(.forbidden, "Not allowed", detail: "a person token acts as its own person; Herald-On-Behalf-Of is for tenant keys")
            }
            guard let own = authentication.person else { throw Problem.unauthorized("the credential is not valid") }
            person = own
        case .tenantKey:
            if let onBehalfOf {
                person = try await store.withTenant(authentication.tenant) { session in
                    do {
                        return try await session.person(email: onBehalfOf)
                    } catch let error as InputError {
                        throw Problem(.badRequest, "Invalid header", detail: "Herald-On-Behalf-Of: \(error.description)")
                    } catch let error as StoreError where error.code == .notFound {
                        throw Problem(.unprocessableContent, "Unknown person", detail: "Herald-On-Behalf-Of names nobody in this tenant")
                    }
                }
            }
        }
        return Caller(tenant: authentication.tenant, credentialID: authentication.credentialID, kind: authentication.kind, person: person)
    }
}
