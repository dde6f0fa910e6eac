import Foundation
import HTTPTypes
import HeraldAPI
import HeraldStore
import Hummingbird

extension Console {
    static let sessionCookie = "herald_console"
    static let signInCSRFCookie = "herald_console_csrf"

    /// Sign-in exchanges a token for a session cookie (`HttpOnly`, `SameSite=Strict`, path
    /// `/console`, `Secure` on TLS, as long as the session). The sign-in form has no session
    /// yet, so its CSRF token is a cookie of its own that the form must repeat.
    func addSignIn(to console: RouterGroup<APIContext>) {
        console.get("sign-in") { request, _ in
            await page {
                let token = Self.randomToken()
                var response = html("sign-in", ["pageTitle": "Sign in", "csrf": token], session: nil)
                response.headers.append(HTTPField(name: .setCookie, value: cookie(Self.signInCSRFCookie, token, maxAge: 3600)))
                return response
            }
        }

        console.post("sign-in") { request, context in
            await page {
                let form = try await Form(request, context: context)
                guard let expected = Cookies(request)[Self.signInCSRFCookie], let presented = form["csrf"], Self.same(expected, presented) else {
                    throw ConsoleRefusal(
                        status: .forbidden, heading: "Refused", detail: "The form was not this console's (CSRF check). Open the sign-in page again.")
                }
                // Sign-ins that fail count against the address, as the API's do.
                let address = attempts.address(of: request, context: context)
                if let wait = attempts.wait(for: address) {
                    var response = error(
                        .tooManyRequests, "Too many attempts", "Too many sign-ins failed from this address: wait a moment.", session: nil)
                    response.headers[.retryAfter] = wait.retryAfterSeconds
                    return response
                }
                let started: (session: ConsoleSession, cookie: String)
                do {
                    started = try await store.startConsoleSession(presenting: (form["token"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines))
                } catch let failure as AuthenticationFailure {
                    attempts.record(address)
                    let token = Self.randomToken()
                    var response = html(
                        "sign-in", ["pageTitle": "Sign in", "csrf": token, "error": "Not signed in: \(failure.description)."], session: nil,
                        status: .unauthorized)
                    response.headers.append(HTTPField(name: .setCookie, value: cookie(Self.signInCSRFCookie, token, maxAge: 3600)))
                    return response
                }
                let seconds = max(1, Int(started.session.expiresAt.timeIntervalSinceNow.rounded(.down)))
                var headers: HTTPFields = [:]
                headers.append(HTTPField(name: .setCookie, value: cookie(Self.sessionCookie, started.cookie, maxAge: seconds)))
                headers.append(HTTPField(name: .setCookie, value: cookie(Self.signInCSRFCookie, "", maxAge: 0)))
                return Self.redirect(to: "/console/history", headers: headers)
            }
        }

        console.post("sign-out") { request, context in
            await page {
                let session = try await requireSession(request)
                let form = try await Form(request, context: context)
                try requireCSRF(form, session)
                try await store.endConsoleSession(session)
                return Self.redirect(to: "/console/sign-in", headers: [.setCookie: cookie(Self.sessionCookie, "", maxAge: 0)])
            }
        }
    }

    /// The live session the request's cookie names, or the way to the sign-in page.
    func requireSession(_ request: Request) async throws -> ConsoleSession {
        guard let cookie = Cookies(request)[Self.sessionCookie] else { throw SignInFirst() }
        do {
            return try await store.consoleSession(cookie: cookie)
        } catch is AuthenticationFailure {
            throw SignInFirst()
        }
    }

    /// Every form posted with a session repeats the session's CSRF token.
    func requireCSRF(_ form: Form, _ session: ConsoleSession) throws {
        guard let presented = form["csrf"], Self.same(session.csrfToken, presented) else {
            throw ConsoleRefusal(
                status: .forbidden, heading: "Refused", detail: "The form was not this console's (CSRF check). Go back, reload and try again.",
                session: session)
        }
    }

    func cookie(_ name: String, _ value: String, maxAge: Int) -> String {
        "\(name)=\(value); Path=/console; Max-Age=\(maxAge); HttpOnly; SameSite=Strict" + (secureCookies ? "; Secure" : "")
    }

    /// 256 random bits in hex.
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &generator)) }.joined()
    }

    /// Compares two tokens looking at every byte.
    static func same(_ left: String, _ right: String) -> Bool {
        CredentialSecret.equalInConstantTime(Data(left.utf8), Data(right.utf8))
    }
}
