import ArgumentParser
import Foundation
import HeraldCore
import HeraldDispatch
import HeraldEmulator
import HeraldHTTP
import HeraldPush
import HeraldRuntime
import HeraldStore
import HeraldTemplates
import Logging

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the whole story on the embedded database and an in-process emulator, showing every notification.",
        discussion: """
            Creates the tenant "demo" (a team, a manager, three members, an admin, and their phones on both apps, iOS \
            and Android), takes a P0 and a P2 activity through assign, start, complete, reject, complete and approve, \
            holds a group chat (a system message, a long message, a muted member, a dead token), opens Carol's app \
            on the group over the live channel (a WebSocket to an in-process herald serve), delivers it all \
            through the dispatcher and prints each notification as the phone shows it, then the history and the \
            stats. The tenant stays for exploring; --reset starts over.
            """)

    @Flag(help: "Delete the demo tenant first, if it exists.") var reset = false

    static let slug = "demo"

    /// `logger` at `level` or above, unless HERALD_LOG_LEVEL chose a level.
    static func quiet(_ logger: Logger, at level: Logger.Level) -> Logger {
        guard ProcessInfo.processInfo.environment["HERALD_LOG_LEVEL"] == nil else { return logger }
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, level)
        return quiet
    }

    struct Phone {
        let owner: String
        let email: String
        let token: String
        let app: AppKind
        let platform: Platform
        let provider: PushProvider
    }

    static let phones = [
        Phone(
            owner: "Alice Moreau", email: "alice@demo.test", token: "a11ce1f0e0000000000000000000000000000000000000000000000000007f3a", app: .manager,
            platform: .ios, provider: .apns),
        Phone(owner: "Bob Stone", email: "bob@demo.test", token: "bob-pixel-member-2b81d4", app: .member, platform: .android, provider: .fcm),
        Phone(
            owner: "Carol Wu", email: "carol@demo.test", token: "ca201f0e0000000000000000000000000000000000000000000000000094c0e2", app: .member,
            platform: .ios, provider: .apns),
        Phone(owner: "Carol Wu", email: "carol@demo.test", token: "dead-carol-old-android-55e1", app: .member, platform: .android, provider: .fcm),
        Phone(owner: "Dave Ng", email: "dave@demo.test", token: "dave-galaxy-member-0d4e77", app: .member, platform: .android, provider: .fcm)
    ]

    /// Alice's iPhone takes Live Activities too: its push-to-start token, and the update token
    /// its Live Activity of the P0 gets once it runs (docs/apps.md).
    static let liveActivityStart = "a11ce5a0e0000000000000000000000000000000000000000000000000007f3a"
    static let liveActivityUpdate = "a11ceb0a70000000000000000000000000000000000000000000000000007f3a"

    func run() async throws {
        // The story is the output: only trouble is logged, unless HERALD_LOG_LEVEL asks for more.
        let logger = Self.quiet(HeraldLogging.logger, at: .warning)
        let emulatorLogger = Self.quiet(logger, at: .critical)
        let style = TerminalStyle()
        let started = ContinuousClock.now
        try await withStore { store in
            if reset, (try? await store.tenant(slug: Self.slug)) != nil {
                try await store.deleteTenant(slug: Self.slug)
                printStyled(style.dim("removed the previous demo tenant"))
            }
            if (try? await store.tenant(slug: Self.slug)) != nil {
                throw UserFacingMessage("the demo tenant already exists; explore it, or start over with herald demo --reset")
            }
            let ids = try await Emulator.withRunning(logger: emulatorLogger) { emulator, endpoints in
                let tenant = try await store.createTenant(slug: Self.slug, name: "Demo Corp")
                // A mail relay too: Erin has no phone, and email reaches her (docs/notifications.md#email).
                let relay = try await EmulatorSMTP.start()
                defer { Task { await relay.stop() } }
                return try await emulator.withGateway(base: endpoints.https, maxInFlight: 64, email: relay, logger: logger) { gateway in
                    try await Dispatcher.with(
                        store: store, listen: false, gateway: gateway, configuration: .init(concurrency: 32, tenants: [tenant.id]), poolSize: 2,
                        logger: logger
                    ) { dispatcher in
                        var story = DemoStory(
                            store: store, tenant: tenant, emulator: emulator, relay: relay, dispatcher: dispatcher, style: style)
                        try await story.play()
                        try await story.playDigest()
                        if let group = story.ids.group { try await story.playLive(conversation: group, logger: logger) }
                        return story.ids
                    }
                }
            }
            let elapsed = started.duration(to: .now)
            // A day's token for Ada, to look at all this in the console.
            let tenant = try await store.tenant(slug: Self.slug)
            let ada = try await store.withTenant(tenant) {
                try await $0.createPersonToken(for: "ada@demo.test", name: "demo console", lifetime: .seconds(86_400), by: "herald demo")
            }
            print("")
            printStyled(style.bold("History") + style.dim("  (herald history --tenant demo --as ada@demo.test)"))
            let entries = try await store.withTenant(tenant) { try await $0.history(viewer: "ada@demo.test", filter: .init(limit: 100)) }
            print(HistoryCommand.List.table(entries))
            print("")
            printStyled(style.bold("Stats") + style.dim("  (herald stats --tenant demo)"))
            let stats = try await store.dispatchStats(since: nil, tenant: Self.slug)
            for tenant in stats.tenants {
                let byStatus = tenant.notifications.values.reduce(into: [String: Int]()) { total, statuses in
                    for (status, count) in statuses { total[status, default: 0] += count }
                }
                printFields([
                    ("notifications", byStatus.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: " · ")),
                    ("deliveries", tenant.deliveries.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: " · ")),
                    ("success rate", tenant.successRate.map { String(format: "%.1f%%", $0 * 100) } ?? "-"),
                    ("dead tokens", "\(tenant.deadTokens)")
                ])
            }
            print("")
            print(String(format: "Done in %.1fs. The demo tenant stays; try:", elapsed.timeInterval))
            for line in [
                "export HERALD_TENANT=demo",
                "herald history --as ada@demo.test --user carol@demo.test     # her old phone's dead token, and why",
                "herald history --as bob@demo.test",
                "herald history show ID --as ada@demo.test",
                "herald why --activity \(ids.carolsActivity) --as ada@demo.test   # who was told, on which phone, and why not",
                "herald why --message \(ids.alicesMessage) --as ada@demo.test    # Dave's silent pushes, Erin's missing phone",
                "herald why --activity \(ids.digestedActivity) --as ada@demo.test   # the start that went into Alice's digest",
                "herald prefs show --as alice@demo.test                     # her digest of starts, and its window",
                "herald device list --user alice@demo.test                  # her laptop's browser: only its push service shows",
                "herald activity list",
                "herald chat list --as carol@demo.test",
                "herald template preview activity.assigned --priority p0",
                "herald demo --reset"
            ] {
                print("  " + line)
            }
            print("")
            printStyled(style.bold("The console") + style.dim("  (the history, each notification and its attempts, in a browser)"))
            print("  herald serve                      # then open http://127.0.0.1:8080/console")
            print("  sign in as Ada Admin with this token (valid for a day, shown once):")
            print("  " + ada.secret)
        }
    }
}

/// The demo's script, one step at a time, each followed by delivery and what the phones show.
struct DemoStory {
    let store: Store
    let tenant: Tenant
    let emulator: Emulator
    /// The emulator's mail relay.
    let relay: EmulatorSMTP
    let dispatcher: Dispatcher
    let style: TerminalStyle
    private var seen = 0
    private var seenEmails = 0
    private var deadTokens = 0
    private var lockScreen = DemoLockScreen()
    /// The ids the closing suggestions name.
    var ids = DemoIDs()
    /// Alice's browser's endpoint at the emulator's push service.
    var browser: String?

    /// What `herald why` is suggested on, once the story has played.
    struct DemoIDs: Sendable {
        var carolsActivity = ""
        var alicesMessage = ""
        /// A round whose start went into Alice's digest.
        var digestedActivity = ""
        var group: UUID?
    }

    init(store: Store, tenant: Tenant, emulator: Emulator, relay: EmulatorSMTP, dispatcher: Dispatcher, style: TerminalStyle) {
        self.store = store
        self.tenant = tenant
        self.emulator = emulator
        self.relay = relay
        self.dispatcher = dispatcher
        self.style = style
    }

    mutating func play() async throws {
        try await store.withTenant(tenant) { session in
            _ = try await session.createTeam(slug: "field-ops", name: "Field Ops")
            _ = try await session.addPerson(email: "alice@demo.test", name: "Alice Moreau", timeZone: "Europe/Paris")
            _ = try await session.addPerson(email: "bob@demo.test", name: "Bob Stone", timeZone: "America/New_York")
            _ = try await session.addPerson(email: "carol@demo.test", name: "Carol Wu", locale: "de", timeZone: "Asia/Tokyo")
            _ = try await session.addPerson(email: "dave@demo.test", name: "Dave Ng")
            _ = try await session.addPerson(email: "erin@demo.test", name: "Erin Park")
            _ = try await session.addPerson(email: "ada@demo.test", name: "Ada Admin", isAdmin: true)
            _ = try await session.setMembership(team: "field-ops", email: "alice@demo.test", role: .manager)
            for email in ["bob@demo.test", "carol@demo.test", "dave@demo.test", "erin@demo.test"] {
                _ = try await session.setMembership(team: "field-ops", email: email, role: .member)
            }
            for phone in DemoCommand.phones {
                _ = try await session.registerDevice(
                    email: phone.email, token: phone.token, app: phone.app, platform: phone.platform, provider: phone.provider)
            }
            _ = try await session.registerDevice(
                email: "alice@demo.test", token: DemoCommand.liveActivityStart, app: .manager, platform: .ios, provider: .apns,
                kind: .liveActivity)
            // Escalation by engagement (docs/notifications.md#not-opened), off until a tenant sets it.
            _ = try await session.setPolicy(try session.policy().applying(unopened: "p0=15m"), actor: "ada@demo.test")
        }
        try await subscribeAlicesBrowser()
        printStyled(
            style.bold("Demo Corp") + " — team Field Ops: Alice Moreau (manager), Bob Stone, Carol Wu (German, Tokyo), Dave Ng, Erin Park; Ada Admin")
        printStyled(
            style.dim(
                "phones: Alice's iPhone (manager app, with Live Activities), Bob's Pixel, Carol's iPhone and her old Android (a dead token), Dave's Galaxy; Erin has none yet; "
                    + "and Alice's laptop: the manager web app in a browser, subscribed to Web Push"
            ))
        printStyled(style.dim("policy: a P0 assignment or request for approval not opened within 15 min is pushed again and told above"))

        for (name, assignee, priority) in [
            ("Replace the pump seal", "bob@demo.test", Priority.p0), ("Quarterly safety audit", "carol@demo.test", .p2)
        ] {
            let first = assignee.prefix { $0 != "@" }.capitalized
            let activity = try await step("Alice assigns \(first) \"\(name)\" (\(priority.rawValue.uppercased()))") { session in
                try await session.assignActivity(
                    actor: "alice@demo.test", team: "field-ops", assignee: assignee, name: name, deadline: Self.deadline(), priority: priority)
            }
            let id = activity.id
            printStyled(style.dim("  activity \(id.lowercasedString)"))
            if assignee == "carol@demo.test" { ids.carolsActivity = id.lowercasedString }
            if priority == .p0 {
                // What Alice's app does once the Live Activity runs: it uploads its update token.
                try await store.withTenant(tenant) { session in
                    let alice = try await session.person(email: "alice@demo.test")
                    _ = try await session.keepLiveActivityToken(activity: id, viewer: alice, token: DemoCommand.liveActivityUpdate, app: nil)
                }
                printStyled(style.dim("  Alice's iPhone runs the Live Activity and uploads its update token; every change now updates it"))
                try await bobOpensHisPush()
            }
            for (label, action, actor) in [
                ("\(first) starts it", ActivityAction.start, assignee), ("\(first) asks for approval", .complete, assignee),
                ("Alice sends it back", .reject, "alice@demo.test"), ("\(first) asks again", .complete, assignee),
                ("Alice approves it", .approve, "alice@demo.test")
            ] {
                let acted = try await step(label) {
                    try await $0.act(action, on: id, actor: actor, reason: action == .reject ? "photos missing" : nil)
                }
                if priority == .p0, action == .complete, label.hasSuffix("for approval") {
                    try await aliceLeavesTheRequestUnopened(since: acted.updatedAt)
                }
            }
            if priority == .p0 { try await bobReadsOnHisLaptop() }
        }
        _ = try await step("Alice assigns Erin \"Check the fire extinguishers\" (P3): Erin has no phone, so it goes by email") { session in
            try await session.assignActivity(
                actor: "alice@demo.test", team: "field-ops", assignee: "erin@demo.test", name: "Check the fire extinguishers",
                deadline: Self.deadline(), priority: .p3)
        }

        let group = try await step("Alice creates the group \"Site Team\" with everyone (a system message: nobody is notified)") { session in
            try await session.createConversation(
                actor: "alice@demo.test", with: ["bob@demo.test", "carol@demo.test", "dave@demo.test", "erin@demo.test"], name: "Site Team",
                photoURL: "https://example.com/site-team.png", team: "field-ops")
        }
        let conversation = group.id
        ids.group = conversation
        _ = try await step("Dave mutes the group") {
            try await $0.changeConversation(actor: "dave@demo.test", conversation: conversation, .mute(true))
        }
        let posted = try await step("Alice posts a long message (cut to 100 characters; Dave's arrives silently)") { session in
            try await session.sendMessage(
                actor: "alice@demo.test", conversation: conversation,
                text:
                    "Reminder for tomorrow: the pump room is closed from 7 to 11 while the seal is replaced. Use the north entrance, and wear your badge. 🛠️",
                clientID: "alice-msg-1", sentAt: nil)
        }
        ids.alicesMessage = posted.message.id.lowercasedString
        printStyled(style.dim("  message \(ids.alicesMessage)"))
        _ = try await step("Bob reads the group and replies") { session in
            try await session.changeConversation(actor: "bob@demo.test", conversation: conversation, .read)
            return try await session.sendMessage(actor: "bob@demo.test", conversation: conversation, text: "On it 👍", clientID: "bob-1", sentAt: nil)
        }
    }

    /// Writes an email the relay took to `HERALD_HOME/demo-mail/N.eml` (a mail client opens
    /// it, HTML part and all); answers the path, or nil when it cannot be written.
    func keep(_ email: EmulatorSMTP.Email) -> String? {
        let folder = DatabaseSource.heraldHome(ProcessInfo.processInfo.environment).appendingPathComponent("demo-mail")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("\(email.queueID).eml")
        return (try? Data(email.data.utf8).write(to: file)) == nil ? nil : file.path
    }

    /// Today plus a week, as the deadline.
    static func deadline() -> LocalDate {
        LocalDate(Date().addingTimeInterval(7 * 86_400), in: .utc)
    }

    /// Runs `action` in the tenant, delivers, and prints what reached the phones.
    @discardableResult
    mutating func step<Result: Sendable>(_ title: String, _ action: (TenantSession) async throws -> Result) async throws -> Result {
        let (store, tenant) = (store, tenant)
        return try await happen(title) { try await store.withTenant(tenant, action) }
    }

    /// Runs `action`, delivers, and prints what reached the phones.
    @discardableResult
    mutating func happen<Result: Sendable>(_ title: String, _ action: () async throws -> Result) async throws -> Result {
        print("")
        printStyled(style.bold("▸ " + title))
        let result = try await action()
        try await dispatcher.run(.drain(horizon: .zero))
        let messages = await emulator.messages()
        let new = messages.dropFirst(seen)
        seen = messages.count
        let emails = relay.emails.dropFirst(seenEmails)
        seenEmails += emails.count
        if new.isEmpty && emails.isEmpty { printStyled(style.dim("  (no notification)")) }
        for message in new { printStyled(describe(message)) }
        for email in emails {
            printStyled(DemoEmail(email).shown(style))
            if let file = keep(email) { printStyled(style.dim("     (the whole email, with its HTML part: \(file))")) }
        }
        let dead = dispatcher.counters.deadTokens
        if dead > deadTokens {
            printStyled(style.dim("  ✗ Carol's old Android answered UNREGISTERED: it is deactivated and will never be used again"))
            deadTokens = dead
        }
        return result
    }

    mutating func describe(_ message: RecordedMessage) -> String {
        if message.headers["apns-push-type"] == "liveactivity" { return describeLiveActivity(message) }
        if message.provider == "webpush" { return describeBrowser(message) }
        let phone = DemoCommand.phones.first { $0.token == message.token }
        let device =
            phone.map { "\($0.owner) · \($0.app.rawValue) app · \($0.platform == .ios ? "iPhone" : "Android")" }
            ?? TokenDisplay.truncated(message.token)
        let payload = (try? JSONSerialization.jsonObject(with: Data(message.payload.utf8))) as? [String: Any]
        let aps =
            (payload?["aps"] as? [String: Any])
            ?? ((((payload?["message"] as? [String: Any])?["apns"] as? [String: Any])?["payload"] as? [String: Any])?["aps"] as? [String: Any])
        let badge = aps?["badge"] as? Int ?? 0
        let sound = aps?["sound"] != nil ? "sound" : "silent"
        if ((payload?["message"] as? [String: Any])?["data"] as? [String: String])?["type"] == PushPayload.badgeType || aps?["alert"] == nil {
            return "  📱 \(TerminalText.escaped(device))  " + style.dim("[badge \(badge) · a badge update: nothing shown]")
        }
        return "  📱 \(TerminalText.escaped(device))  " + style.dim("[badge \(badge) · \(sound)]") + "\n     " + style.bold(message.title ?? "")
            + "\n     " + TerminalText.escaped(message.body ?? "")
    }
}

extension DemoStory {
    /// A Live Activity push: Alice's lock screen, as it looks after it.
    mutating func describeLiveActivity(_ message: RecordedMessage) -> String {
        let payload = (try? JSONSerialization.jsonObject(with: Data(message.payload.utf8))) as? [String: Any]
        let aps = payload?["aps"] as? [String: Any] ?? [:]
        let event = aps["event"] as? String ?? "?"
        let what =
            switch event {
            case "start": "Live Activity started"
            case "end": "Live Activity ended"
            default: "Live Activity updated" + (message.headers["apns-priority"] == "5" ? " (quietly, priority 5)" : "")
            }
        let box = lockScreen.render(aps, receivedAt: message.receivedAt).map { "     " + $0 }
        return "  🔒 Alice Moreau · lock screen · iPhone  " + style.dim("[\(what)]") + "\n" + box.joined(separator: "\n")
    }
}

/// Bold and dim on a terminal, plain text elsewhere or with NO_COLOR set.
struct TerminalStyle {
    let enabled: Bool

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        enabled = isatty(STDOUT_FILENO) == 1 && environment["NO_COLOR"].map(\.isEmpty) ?? true && environment["TERM"] != "dumb"
    }

    /// `text` in bold, its own control characters escaped (`TerminalText`); print it with `printStyled`.
    func bold(_ text: String) -> String { styled(text, "1") }
    /// `text` dimmed, its own control characters escaped; print it with `printStyled`.
    func dim(_ text: String) -> String { styled(text, "2") }

    private func styled(_ text: String, _ code: String) -> String {
        let safe = TerminalText.escaped(text)
        return enabled ? "\u{1B}[\(code)m\(safe)\u{1B}[0m" : safe
    }
}
