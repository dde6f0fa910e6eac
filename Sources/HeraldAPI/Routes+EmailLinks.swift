import Foundation
import HeraldCore
import HeraldStore
import Hummingbird

extension HeraldAPI {
    /// The one-click unsubscribe of emails (docs/notifications.md#unsubscribing): no
    /// credentials, the signed token is the authority. `GET` shows a page with the button and
    /// changes nothing (mail scanners follow links); `POST` (what a mail client sends for
    /// `List-Unsubscribe-Post: List-Unsubscribe=One-Click`, RFC 8058) turns that event's email
    /// off for that person. A token forged or altered is refused, and counted against the
    /// address like a wrong credential.
    func addEmailLinks(to router: Router<APIContext>) {
        router.get("v1/email/unsubscribe") { request, context in
            let subject = try await linkSubject(request, context)
            let token = HTMLText.escaped(request.uri.queryParameters.get("token") ?? "")
            return Self.page(
                """
                <p>Stop emails about <strong>\(HTMLText.escaped(subject.event.rawValue))</strong> (the \(subject.app.rawValue) app)?
                Pushes to your phone go on.</p>
                <form method="post" action="\(Self.unsubscribePath)?token=\(token)">
                <input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Stop these emails</button></form>
                """)
        }
        router.post("v1/email/unsubscribe") { request, context in
            let subject = try await linkSubject(request, context)
            guard let name = try await store.turnEmailOff(subject) else {
                throw Problem(.notFound, "Not found", detail: "the person this link was for is gone")
            }
            return Self.page(
                "<p>Done, \(HTMLText.escaped(name)): no more emails about <strong>\(HTMLText.escaped(subject.event.rawValue))</strong>.</p>")
        }
    }

    static let unsubscribePath = "/v1/email/unsubscribe"

    /// The link's subject, when its token is Herald's; else a 403 problem, counted.
    private func linkSubject(_ request: Request, _ context: APIContext) async throws -> EmailLinks.Subject {
        let address = attempts.address(of: request, context: context)
        if let wait = attempts.wait(for: address) { throw Problem.tooManyAttempts(wait) }
        let links = try await store.emailLinks()
        guard let token = request.uri.queryParameters.get("token"), let subject = links.subject(of: token) else {
            attempts.record(address)
            throw Problem(.forbidden, "Forbidden", detail: "this unsubscribe link is not one Herald signed: use the link in the email")
        }
        return subject
    }

    private static func page(_ body: String) -> Response {
        let html = """
            <!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
            <title>Herald email</title></head><body style="font-family: sans-serif; max-width: 480px; margin: 48px auto;">\(body)</body></html>
            """
        return Response(
            status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}
