import Foundation
import HeraldCore
import Testing

@testable import HeraldStore

/// The one-click unsubscribe tokens (docs/notifications.md#unsubscribing): what Herald signed
/// reads back; anything altered or made without the key does not.
@Suite struct EmailLinksTests {
    let subject = EmailLinks.Subject(tenant: UUID(), person: UUID(), event: .activityAssigned, app: .member)

    @Test func aTokenReadsBackAndOneAlteredOrForgedDoesNot() throws {
        let links = EmailLinks(secret: "key-one")
        let token = links.token(for: subject)
        #expect(links.subject(of: token) == subject)
        #expect(token.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." })
        // Another event, the same signature: refused.
        let parts = token.split(separator: ".")
        var other = subject
        other.event = .chatMessage
        let swapped = String(links.token(for: other).split(separator: ".")[0]) + "." + parts[1]
        #expect(links.subject(of: swapped) == nil)
        // Signed with another key: refused.
        #expect(links.subject(of: EmailLinks(secret: "key-two").token(for: subject)) == nil)
        for junk in ["", ".", "a.b", String(parts[0]), token + "x", String(repeating: "a", count: 5_000)] {
            #expect(links.subject(of: junk) == nil)
        }
    }
}
