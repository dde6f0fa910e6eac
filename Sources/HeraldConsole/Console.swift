import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldStore
import Hummingbird
import Logging

/// The admin console of docs/console.md at `/console`: server-rendered pages (Mustache, HTML
/// escaped), a session cookie exchanged for a person token or tenant key, a CSRF token on
/// every form, and a Content-Security-Policy that allows nothing but the page's own style
/// sheet. Role-aware exactly like the API: it reads through the same store calls with the
/// same viewer.
public struct Console: Sendable {
    let store: Store
    let logger: Logger
    /// `Secure` on the cookies: set when `herald serve` speaks TLS itself (or is told it is
    /// behind a TLS proxy).
    let secureCookies: Bool
    let pages: Pages
    /// Failed sign-ins per client address, shared with the API's authentication.
    let attempts: FailedAttempts

    public init(store: Store, secureCookies: Bool, attempts: FailedAttempts, logger: Logger) throws {
        self.store = store
        self.attempts = attempts
        self.secureCookies = secureCookies
        self.logger = logger
        self.pages = try Pages()
    }

    public func addRoutes(to router: Router<APIContext>) {
        router.get("console") { _, _ in await page { Self.redirect(to: "/console/history") } }
        let console = router.group("console")
        console.get("console.css") { _, _ in
            var response = Response(
                status: .ok, headers: [.contentType: "text/css; charset=utf-8"], body: .init(byteBuffer: .init(string: pages.styleSheet)))
            response.headers[.cacheControl] = "max-age=3600"
            return response
        }
        console.get("live.js") { _, _ in
            var response = Response(
                status: .ok, headers: [.contentType: "text/javascript; charset=utf-8"], body: .init(byteBuffer: .init(string: pages.liveScript)))
            response.headers[.cacheControl] = "max-age=3600"
            return response
        }
        addLive(to: console)
        addSignIn(to: console)
        addHistory(to: console)
        addActivities(to: console)
        addPeople(to: console)
        addPreferences(to: console)
        addTeams(to: console)
        addStats(to: console)
        addWebhooks(to: console)
    }

    // MARK: Answers

    /// Runs a page's handler: every answer gets the console's security headers, and every
    /// failure becomes a page (or, without a live session, the way to the sign-in page).
    func page(_ handler: () async throws -> Response) async -> Response {
        var response: Response
        do {
            response = try await handler()
        } catch is SignInFirst {
            response = Self.redirect(to: "/console/sign-in")
        } catch let refusal as ConsoleRefusal {
            response = error(refusal.status, refusal.heading, refusal.detail, session: refusal.session)
        } catch let error as InputError {
            response = self.error(.unprocessableContent, "That filter does not work", error.description, session: nil)
        } catch let error as StoreError where error.code == .notFound {
            response = self.error(.notFound, "Not found", "Nothing here, or nothing you may see.", session: nil)
        } catch let error as StoreError where error.code == .forbidden {
            response = self.error(.forbidden, "Not allowed", error.description, session: nil)
        } catch let error as StoreError where error.code == .invalid {
            response = self.error(.unprocessableContent, "Not possible", error.description, session: nil)
        } catch let error where Store.isUnavailable(error) {
            logger.warning("console: the database is unreachable", metadata: ["error": "\(error)"])
            response = self.error(
                .serviceUnavailable, "Database unavailable",
                "The database cannot be reached just now (a failover may be under way). Nothing was changed: try again in a moment.",
                session: nil)
            response.headers[.retryAfter] = "2"
        } catch {
            logger.error("console: unexpected error", metadata: ["error": "\(error)"])
            response = self.error(.internalServerError, "Something went wrong", "The error is in the server's log.", session: nil)
        }
        for (name, value) in Self.securityHeaders { response.headers[name] = value }
        return response
    }

    /// Runs `body` for a signed-in page: what the store refuses (the access policy's answers) is
    /// shown as that page's refusal, with the session's navigation: not found exactly as
    /// something that does not exist; forbidden as "Admins only" (what the console's pages
    /// forbid, only those who run the tenant may see).
    static func refusingAsPages<Result>(_ session: ConsoleSession, _ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch let error as StoreError where error.code == .notFound {
            throw notFound(session)
        } catch is InputError {
            throw notFound(session)
        } catch let error as StoreError where error.code == .forbidden {
            throw ConsoleRefusal(status: .forbidden, heading: "Admins only", detail: "Not for you: \(error.description).", session: session)
        }
    }

    /// A rendered page.
    func html(_ template: String, _ values: [String: Any], session: ConsoleSession?, status: HTTPResponse.Status = .ok) -> Response {
        var context = values
        if let session {
            context["signedIn"] = true
            context["csrf"] = session.csrfToken
            context["tenant"] = session.authentication.tenant.name
            context["who"] = session.authentication.person.map { "\($0.name) <\($0.email)>" } ?? "tenant key"
            context["viewerIsAdmin"] = AccessPolicy(session.authentication.person).runsTheTenant
        }
        let text = pages.render(template, context)
        return Response(status: status, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: .init(string: text)))
    }

    func error(_ status: HTTPResponse.Status, _ heading: String, _ detail: String, session: ConsoleSession?) -> Response {
        html("error", ["pageTitle": heading, "heading": heading, "detail": detail], session: session, status: status)
    }

    static func redirect(to path: String, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.location] = path
        return Response(status: .seeOther, headers: headers)
    }

    /// Nothing but the console's own style sheet and script (the history page's live refresh)
    /// load, no inline script, no frame; connections only to this origin (its live channel);
    /// forms post only here; nothing is cached and no address leaks in a Referer.
    static let securityHeaders: [(HTTPField.Name, String)] = [
        (
            .contentSecurityPolicy,
            "default-src 'none'; style-src 'self'; img-src 'self'; script-src 'self'; connect-src 'self'; form-action 'self'; "
                + "frame-ancestors 'none'; base-uri 'none'"
        ),
        (.xContentTypeOptions, "nosniff"),
        (HTTPField.Name("Referrer-Policy")!, "no-referrer"),
        (.cacheControl, "no-store"),
        (HTTPField.Name("X-Frame-Options")!, "DENY")
    ]
}

/// No live session: the answer is the sign-in page.
struct SignInFirst: Error {}

/// A refusal shown as a page with its status.
struct ConsoleRefusal: Error {
    let status: HTTPResponse.Status
    let heading: String
    let detail: String
    var session: ConsoleSession?
}
