import Foundation
import HeraldAPI
import HeraldCore
import HeraldStore
import Hummingbird

extension Console {
    /// `/console/live`: the live channel for the history page's script, as the session's
    /// person (the console's cookie; a tenant key's session has no person and gets none).
    /// Same origin only: a page elsewhere cannot open it with this console's cookie.
    func addLive(to console: RouterGroup<APIContext>) {
        console.get("live") { request, context in
            guard let origin = request.headers[.origin], let host = request.head.authority,
                origin == "http://\(host)" || origin == "https://\(host)"
            else { return Response(status: .forbidden) }
            let session: ConsoleSession
            do {
                session = try await requireSession(request)
            } catch is SignInFirst {
                return Response(status: .unauthorized)
            }
            guard let person = session.authentication.person else { return Response(status: .forbidden) }
            guard let slot = context.liveUpgrade else { return Response(status: .upgradeRequired) }
            try await slot.admit(
                tenant: session.authentication.tenant, person: person, credentialID: session.authentication.credentialID,
                consoleSession: session.id)
            return Response(status: .ok)
        }
    }
}
