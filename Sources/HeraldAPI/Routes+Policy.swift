import Foundation
import HeraldCore
import HeraldStore
import Hummingbird

// (Its per-priority objects name an unknown priority themselves, with the priorities it may be.)
extension ReminderPolicy: FieldNamed {}

extension HeraldAPI {
    /// `GET /v1/policy` (anyone in the tenant) and `PUT /v1/policy` (admins and tenant keys):
    /// the reminder policy of docs/notifications.md as one document; a PUT names every field.
    func addPolicy(to group: RouterGroup<APIContext>) {
        group.get("policy") { _, context in
            let caller = try context.requireCaller()
            return try JSONBody.response(try await store.withTenant(caller.tenant) { try await $0.policy() })
        }

        group.put("policy") { request, context in
            let caller = try context.requireCaller()
            try caller.requireAdmin("change the tenant's policy")
            let policy = try await JSONBody.decode(ReminderPolicy.self, from: request, context: context)
            let change = try await store.withTenant(caller.tenant) { session in
                try await session.setPolicy(policy, by: caller.person)
            }
            return try JSONBody.response(change.policy)
        }
    }
}
