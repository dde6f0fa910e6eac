import Foundation
import HeraldAPI
import HeraldCore
import HeraldStore
import Hummingbird

extension Console {
    /// Taking someone out of a team from their page (docs/concepts.md#people-leave-teams): for
    /// those who run the tenant, as the API's `DELETE /v1/teams/{slug}/members/{email}`.
    func addTeams(to console: RouterGroup<APIContext>) {
        console.post("people/:email/teams/:slug/remove") { request, context in
            await page {
                let session = try await requireSession(request)
                let form = try await Form(request, context: context)
                try requireCSRF(form, session)
                guard AccessPolicy(session.authentication.person).runsTheTenant else {
                    throw ConsoleRefusal(
                        status: .forbidden, heading: "Refused", detail: "Only the tenant's admins change who is in a team.", session: session)
                }
                let email = try context.parameters.decoded("email").lowercased()
                let slug = try context.parameters.decoded("slug")
                let person = try await Self.refusingAsPages(session) {
                    try await store.withTenant(session.authentication.tenant) { tenant in
                        try await tenant.removeMembership(team: slug, email: email).person
                    }
                }
                return Self.redirect(to: "/console/people/\(pathSegment(person.email))")
            }
        }
    }
}
