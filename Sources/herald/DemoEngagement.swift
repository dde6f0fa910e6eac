import Foundation
import HeraldCore
import HeraldStore

extension DemoStory {
    /// Bob taps the push of his P0 on his Pixel: his app reports the opening with the push's
    /// `notificationId` (docs/inbox.md), and Alice's history says when, on which device.
    mutating func bobOpensHisPush() async throws {
        let pixel = "bob-pixel-member-2b81d4"
        guard let pushed = await emulator.messages().last(where: { $0.token == pixel }),
            let object = try? JSONSerialization.jsonObject(with: Data(pushed.payload.utf8)) as? [String: Any],
            let data = (object["message"] as? [String: Any])?["data"] as? [String: String],
            let id = data["notificationId"].flatMap(UUID.init(uuidString:))
        else { return }
        let detail = try await step("Bob taps the push on his Pixel: his app reports it (POST /v1/notifications/{id}/opened)") { session in
            let (bob, alice) = (try await session.person(email: "bob@demo.test"), try await session.person(email: "alice@demo.test"))
            let device = try await session.devices(viewer: AccessPolicy(bob), email: bob.email).first { $0.token == pixel }?.id
            _ = try await session.reportOpened(id, by: bob.id, device: device, action: nil)
            return try await session.historyDetail(viewer: alice, id: id)
        }
        printStyled(style.dim("  Alice's history of it: sent\(WhyCommand.engagement(detail))"))
    }

    /// Alice does not open Bob's request for approval of the P0: 15 minutes on (the demo moves
    /// the timers' clock rather than wait), Herald pushes it to her again and tells Ada, the
    /// admin (docs/notifications.md#not-opened).
    mutating func aliceLeavesTheRequestUnopened(since asked: Date) async throws {
        let (store, tenant) = (store, tenant)
        _ = try await happen("15 minutes on, Alice has not opened it: it is pushed to her again, and Ada (admin) is told") {
            try await store.fireDueTimers(at: asked.addingTimeInterval(16 * 60), tenants: [tenant.id])
        }
        printStyled(style.dim("  (the demo moved the timers' clock 16 minutes; Ada has no phone: it waits in her inbox, and reached her by email)"))
    }

    /// Bob reads what is left in his inbox on his laptop (the web app: no device of his): his
    /// Pixel's badge drops with a silent badge update (docs/inbox.md#one-badge).
    mutating func bobReadsOnHisLaptop() async throws {
        _ = try await step("Bob reads the rest of his inbox on his laptop (POST /v1/me/inbox/read): his Pixel's badge drops") { session in
            let bob = try await session.person(email: "bob@demo.test")
            return try await session.markInbox(of: bob.id, .read, .before(Date()), device: nil)
        }
    }
}
