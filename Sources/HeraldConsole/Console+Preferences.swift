import Foundation
import HeraldAPI
import HeraldCore
import HeraldStore
import Hummingbird

extension Console {
    /// A person's own choices on their page (docs/notifications.md#digests): how each event is
    /// pushed to them, by which channel (docs/notifications.md#email), and how long their digest gathers. Only they may change them
    /// (`AccessPolicy.mayChangePreferences`); every field is checked before anything is written,
    /// and only what the person changed is written (each field comes with the value the page
    /// showed, `shown.NAME`): a tenant's default the page showed stays a default.
    func addPreferences(to console: RouterGroup<APIContext>) {
        console.post("people/:email/preferences") { request, context in
            await page {
                let session = try await requireSession(request)
                let form = try await Form(request, context: context)
                try requireCSRF(form, session)
                let email = try context.parameters.decoded("email").lowercased()
                guard let person = session.authentication.person, person.email == email,
                    AccessPolicy(person).mayChangePreferences(of: person.id)
                else {
                    throw ConsoleRefusal(
                        status: .forbidden, heading: "Refused", detail: "Only they may change what is pushed to them.", session: session)
                }
                /// A field's value when the person changed it (or the form did not say what it showed).
                func changed(_ name: String) -> String? {
                    guard let value = form[name], value != form["shown." + name] else { return nil }
                    return value
                }
                let (window, modes, channels) = try Self.refusingInput(session) {
                    let window = try changed("window").map { try DigestWindow.parse($0) }
                    let modes = try EventKind.allCases.flatMap { event in
                        try event.apps.compactMap { app -> (EventKind, AppKind, PushMode)? in
                            try changed("mode.\(event.rawValue).\(app.rawValue)").map {
                                (event, app, try PushMode.parse($0, field: "\(event.rawValue) on \(app.rawValue)"))
                            }
                        }
                    }
                    let channels = try EventKind.allCases.flatMap { event in
                        try event.apps.compactMap { app -> (EventKind, AppKind, NotificationChannel)? in
                            try changed("channel.\(event.rawValue).\(app.rawValue)").map {
                                (
                                    event, app,
                                    try Input.choice($0, field: "the channel of \(event.rawValue) on \(app.rawValue)", as: NotificationChannel.self)
                                )
                            }
                        }
                    }
                    return (window, modes, channels)
                }
                try await store.withTenant(session.authentication.tenant) { tenant in
                    if let window { try await tenant.setDigestWindow(window, for: person) }
                    for (event, app, mode) in modes { try await tenant.setPreference(event, app: app, mode: mode, for: person, by: person) }
                    for (event, app, channel) in channels { try await tenant.setChannel(channel, for: event, app: app, of: person) }
                }
                // (An email is checked when it is added: no character a header may not hold.)
                return Self.redirect(to: "/console/people/\(pathSegment(person.email))")
            }
        }
    }

    /// Runs `check`; a refused input is a page that says what is wrong.
    static func refusingInput<Result>(_ session: ConsoleSession, _ check: () throws -> Result) throws -> Result {
        do {
            return try check()
        } catch let error as InputError {
            throw ConsoleRefusal(status: .unprocessableContent, heading: "Not saved", detail: error.description, session: session)
        }
    }
}
