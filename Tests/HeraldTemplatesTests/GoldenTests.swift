import Foundation
import HeraldCore
import HeraldTemplates
import Testing

@Suite struct GoldenTests {
    static let catalog = TemplateCatalog()
    /// 2026-11-21 10:00 UTC.
    static let morning = Date(timeIntervalSince1970: 1_795_269_600 - 4 * 3600)

    static func activity(_ priority: Priority, at date: Date = morning) -> TemplateVariables.Activity {
        TemplateVariables.Activity(
            name: "Ship v2", manager: "Alice Moreau", member: "Chidi Okafor", actor: "Alice Moreau", team: "Field Ops",
            priority: priority, deadline: LocalDate("2026-11-28") ?? LocalDate(date, in: .gmt), occurredAt: date,
            waitingSince: date.addingTimeInterval(-5400))
    }

    static let english: [TemplateEvent: String] = [
        .activity(.activityAssigned): "Nov 21, 2026 - Alice Moreau has assigned you a new activity with deadline Nov 28, 2026: Ship v2.",
        .activity(.activityStarted): "Nov 21, 2026 - Chidi Okafor has started activity with deadline Nov 28, 2026 for Ship v2.",
        .activity(.activityCompletionRequested): "Nov 21, 2026 - Chidi Okafor has completed activity with deadline Nov 28, 2026 for Ship v2.",
        .activity(.activityApproved): "Nov 21, 2026 - Alice Moreau has approved your activity: Ship v2.",
        .activity(.activityRejected): "Nov 21, 2026 - Alice Moreau has sent back your activity: Ship v2.",
        .activity(.activityApprovalReminder):
            "Nov 21, 2026 - Chidi Okafor is still waiting for your approval of Ship v2 (deadline Nov 28, 2026), since Nov 21, 2026, 08:30.",
        .activity(.activityEscalated):
            "Nov 21, 2026 - Ship v2 in Field Ops has waited for approval by Alice Moreau since Nov 21, 2026, 08:30; Chidi Okafor completed it.",
        .activity(.activityDeadlineSoon): "Nov 21, 2026 - Your activity Ship v2 is due today (Nov 28, 2026).",
        .activity(.activityOverdue): "Nov 21, 2026 - Ship v2 assigned to Chidi Okafor is overdue: its deadline was Nov 28, 2026.",
        .activity(.activityUnopened): "Nov 21, 2026 - Alice Moreau has not opened Ship v2 (P%, Field Ops), sent 90 minutes ago.",
        .liveActivityStart: "Chidi Okafor has it (Field Ops), deadline Nov 28, 2026. Follow it on the lock screen."
    ]

    static let englishTitles: [TemplateEvent: String] = [
        .activity(.activityApprovalReminder): "Approval Reminder", .activity(.activityEscalated): "Activity Escalated",
        .activity(.activityDeadlineSoon): "Deadline Today",
        .activity(.activityOverdue): "Activity Overdue", .activity(.activityUnopened): "Not Opened by Alice Moreau",
        .liveActivityStart: "P0: Ship v2"
    ]
    static let germanTitles: [TemplateEvent: String] = [
        .activity(.activityApprovalReminder): "Erinnerung: Genehmigung", .activity(.activityEscalated): "Aktivität eskaliert",
        .activity(.activityDeadlineSoon): "Frist heute",
        .activity(.activityOverdue): "Aktivität überfällig", .activity(.activityUnopened): "Von Alice Moreau nicht geöffnet",
        .liveActivityStart: "P0: Ship v2"
    ]

    static let german: [TemplateEvent: String] = [
        .activity(.activityAssigned): "21. Nov. 2026 - Alice Moreau hat dir eine neue Aktivität mit Frist 28. Nov. 2026 zugewiesen: Ship v2.",
        .activity(.activityStarted): "21. Nov. 2026 - Chidi Okafor hat die Aktivität Ship v2 mit Frist 28. Nov. 2026 begonnen.",
        .activity(.activityCompletionRequested): "21. Nov. 2026 - Chidi Okafor hat die Aktivität Ship v2 mit Frist 28. Nov. 2026 abgeschlossen.",
        .activity(.activityApproved): "21. Nov. 2026 - Alice Moreau hat deine Aktivität genehmigt: Ship v2.",
        .activity(.activityRejected): "21. Nov. 2026 - Alice Moreau hat deine Aktivität zurückgegeben: Ship v2.",
        .activity(.activityApprovalReminder):
            "21. Nov. 2026 - Chidi Okafor wartet seit 21. Nov. 2026, 09:30 auf deine Genehmigung für Ship v2 (Frist 28. Nov. 2026).",
        .activity(.activityEscalated):
            "21. Nov. 2026 - Ship v2 in Field Ops wartet seit 21. Nov. 2026, 09:30 auf die Genehmigung durch Alice Moreau; Chidi Okafor hat sie abgeschlossen.",
        .activity(.activityDeadlineSoon): "21. Nov. 2026 - Deine Aktivität Ship v2 ist heute fällig (28. Nov. 2026).",
        .activity(.activityOverdue): "21. Nov. 2026 - Ship v2 von Chidi Okafor ist überfällig: Die Frist war 28. Nov. 2026.",
        .activity(.activityUnopened): "21. Nov. 2026 - Alice Moreau hat Ship v2 noch nicht geöffnet (P%, Field Ops), gesendet vor 90 Minuten.",
        .liveActivityStart: "Chidi Okafor bearbeitet sie (Field Ops), Frist 28. Nov. 2026. Auf dem Sperrbildschirm verfolgen."
    ]

    static let activityEvents = TemplateEvent.allCases.filter { !$0.isChat && $0 != .digest && $0 != .email && $0 != .emailHTML }

    @Test(arguments: activityEvents, [Priority.p0, .p1])
    func englishActivityMessages(event: TemplateEvent, priority: Priority) async throws {
        let template = try await Self.catalog.template(for: event, locale: "en", tenant: nil)
        let message = template.render(Self.activity(priority), for: .init(locale: "en", timeZone: "UTC"))
        #expect(message.title == Self.englishTitles[event, default: "Activity Update"])
        let body = try #require(Self.english[event]).replacingOccurrences(of: "P%", with: priority.rawValue.uppercased())
        #expect(message.body == (priority == .p0 ? "🔻P0🔻" + body : body))
    }

    @Test(arguments: activityEvents, [Priority.p0, .p1])
    func germanActivityMessages(event: TemplateEvent, priority: Priority) async throws {
        let template = try await Self.catalog.template(for: event, locale: "de", tenant: nil)
        let message = template.render(Self.activity(priority), for: .init(locale: "de", timeZone: "Europe/Berlin"))
        #expect(message.title == Self.germanTitles[event, default: "Aktivitäts-Update"])
        let body = try #require(Self.german[event]).replacingOccurrences(of: "P%", with: priority.rawValue.uppercased())
        #expect(message.body == (priority == .p0 ? "🔻P0🔻" + body : body))
    }

    /// An item not opened: its person is told in their own words, the others in their manager's.
    @Test func anItemNotOpenedIsWordedForItsPersonAndForThoseAbove() async throws {
        var activity = Self.activity(.p0)
        activity.actor = "Bob Tanaka"
        activity.waitingSince = Self.morning.addingTimeInterval(-15 * 60)
        let english = try await Self.catalog.template(for: .activity(.activityUnopened), locale: "en", tenant: nil)
        #expect(
            english.render(activity, for: .init()).body
                == "🔻P0🔻Nov 21, 2026 - Bob Tanaka has not opened Ship v2 (P0, Field Ops), sent 15 minutes ago.")
        activity.forActor = true
        #expect(
            english.render(activity, for: .init())
                == RenderedMessage(
                    title: "Not Opened Yet", body: "🔻P0🔻Nov 21, 2026 - You have not opened Ship v2 (P0, Field Ops), sent 15 minutes ago."))
        let german = try await Self.catalog.template(for: .activity(.activityUnopened), locale: "de", tenant: nil)
        #expect(german.render(activity, for: .init(locale: "de", timeZone: "Europe/Berlin")).title == "Noch nicht geöffnet")
        #expect(TemplateVariables.formatWaited(59, locale: "en") == "1 minute")
        #expect(TemplateVariables.formatWaited(3 * 3600, locale: "de") == "3 Stunden")
        #expect(TemplateVariables.formatWaited(86_400 * 3, locale: "en") == "3 days")
    }

    @Test func theP0PrefixIsTheTriangleP0TriangleThenTheDate() async throws {
        let template = try await Self.catalog.template(for: .activity(.activityAssigned), locale: "en", tenant: nil)
        let body = template.render(Self.activity(.p0), for: .init()).body
        #expect(Array(body.unicodeScalars.prefix(4)) == ["\u{1F53B}", "P", "0", "\u{1F53B}"])
        #expect(body.dropFirst(4).hasPrefix("Nov 21, 2026"))
        for priority in [Priority.p1, .p2, .p3] {
            #expect(!template.render(Self.activity(priority), for: .init()).body.contains("🔻"))
        }
    }

    @Test func anEventLateInTheEveningIsTomorrowInTokyo() async throws {
        let lateUTC = Date(timeIntervalSince1970: 1_795_303_800)  // 2026-11-21 23:30 UTC
        let template = try await Self.catalog.template(for: .activity(.activityApproved), locale: "en", tenant: nil)
        let tokyo = template.render(Self.activity(.p1, at: lateUTC), for: .init(locale: "en", timeZone: "Asia/Tokyo"))
        let london = template.render(Self.activity(.p1, at: lateUTC), for: .init(locale: "en", timeZone: "Europe/London"))
        #expect(tokyo.body.hasPrefix("Nov 22, 2026 - "))
        #expect(london.body.hasPrefix("Nov 21, 2026 - "))
        // The deadline is a calendar date: the same day in every zone.
        let assigned = try await Self.catalog.template(for: .activity(.activityAssigned), locale: "en", tenant: nil)
        let honolulu = assigned.render(Self.activity(.p1, at: lateUTC), for: .init(locale: "en", timeZone: "Pacific/Honolulu"))
        #expect(honolulu.body == "Nov 21, 2026 - Alice Moreau has assigned you a new activity with deadline Nov 28, 2026: Ship v2.")
    }

    @Test func namesAreNeverHTMLEscaped() async throws {
        var activity = Self.activity(.p1)
        activity.name = "Tom & Jerry <3 \"quoted\" 'single'"
        activity.manager = "O'Brien & <Sons>"
        let template = try await Self.catalog.template(for: .activity(.activityApproved), locale: "en", tenant: nil)
        #expect(
            template.render(activity, for: .init()).body
                == "Nov 21, 2026 - O'Brien & <Sons> has approved your activity: Tom & Jerry <3 \"quoted\" 'single'.")
        let chat = try await Self.catalog.template(for: .chatGroup, locale: "en", tenant: nil)
        let message = chat.render(.init(sender: "Tom & Jerry", group: "<b>Launch</b>", isGroup: true, text: "a < b && c > d"))
        #expect(message == RenderedMessage(title: "Tom & Jerry in <b>Launch</b>", body: "a < b && c > d"))
    }

    @Test func chatTitles() async throws {
        let direct = try await Self.catalog.template(for: .chatDirect, locale: "en", tenant: nil)
        #expect(
            direct.render(.init(sender: "Alice Moreau", group: nil, isGroup: false, text: "Hi"))
                == RenderedMessage(title: "Alice Moreau", body: "Hi"))
        let group = try await Self.catalog.template(for: .chatGroup, locale: "en", tenant: nil)
        #expect(
            group.render(.init(sender: "Alice Moreau", group: "Launch crew", isGroup: true, text: "Hi")).title
                == "Alice Moreau in Launch crew")
        #expect(group.render(.init(sender: "Alice Moreau", group: nil, isGroup: true, text: "Hi")).title == "Alice Moreau in Group Chat")
        #expect(group.render(.init(sender: "Alice Moreau", group: "", isGroup: true, text: "Hi")).title == "Alice Moreau in Group Chat")
        let german = try await Self.catalog.template(for: .chatGroup, locale: "de", tenant: nil)
        #expect(german.render(.init(sender: "Alice", group: nil, isGroup: true, text: "Hallo")).title == "Alice in Gruppenchat")
    }

    /// Quiet hours: one push for the messages held back in a conversation.
    @Test func summaries() async throws {
        let english = try await Self.catalog.template(for: .chatSummary, locale: "en", tenant: nil)
        #expect(
            english.render(.init(sender: "Alice Moreau", group: "Site Team", isGroup: true, text: "Hi", count: 3))
                == RenderedMessage(title: "Site Team", body: "3 new messages in Site Team"))
        #expect(
            english.render(.init(sender: "Alice Moreau", group: nil, isGroup: false, text: "Hi", count: 2))
                == RenderedMessage(title: "Alice Moreau", body: "2 new messages in your chat with Alice Moreau"))
        let german = try await Self.catalog.template(for: .chatSummary, locale: "de", tenant: nil)
        #expect(
            german.render(.init(sender: "Alice", group: "Site Team", isGroup: true, text: "Hallo", count: 3))
                == RenderedMessage(title: "Site Team", body: "3 neue Nachrichten in Site Team"))
        #expect(
            german.render(.init(sender: "Alice", group: nil, isGroup: true, text: "Hallo", count: 4)).body
                == "4 neue Nachrichten in deinem Gruppenchat")
    }

    @Test func missingLocalesFallBackEventByEvent() async throws {
        #expect(TemplateCatalog.fallbacks(for: "de-AT") == ["de-AT", "de", "en"])
        #expect(TemplateCatalog.fallbacks(for: "en") == ["en"])
        // German has no direct-chat file: English serves it.
        let direct = try await Self.catalog.template(for: .chatDirect, locale: "de-AT", tenant: nil)
        #expect(direct.source.hasPrefix("{{sender}}"))
        let approved = try await Self.catalog.template(for: .activity(.activityApproved), locale: "de-AT", tenant: nil)
        #expect(approved.render(Self.activity(.p1), for: .init(locale: "de-AT")).title == "Aktivitäts-Update")
        let japanese = try await Self.catalog.template(for: .activity(.activityApproved), locale: "ja", tenant: nil)
        #expect(japanese.render(Self.activity(.p1), for: .init(locale: "ja")).title == "Activity Update")
    }

    @Test func everyShippedFileParses() {
        let defaults = DefaultTemplates.bundled
        #expect(defaults.locales == ["de", "en"])
        for event in TemplateEvent.allCases {
            #expect(defaults.templates[TemplateKey(event: event, locale: "en")] != nil, "\(event)")
        }
    }

    /// The digest's words: a team's seven updates, two of them named; one chat message; in en and de.
    @Test func digestsInEnglishAndGerman() async throws {
        let english = try await Self.catalog.template(for: .digest, locale: "en", tenant: nil)
        let seven = english.render(TemplateVariables.sampleDigest)
        #expect(seven.title == "Field Ops: 7 updates")
        #expect(seven.body == "Bob Lee started Replace the pump seal · Carol Diaz asked for approval of Fence repair · and 5 more")
        let chat = TemplateVariables.Digest(
            scope: "Site Team", isChat: true, items: [.init(event: .chatMessage, sender: "Dana Kim", text: "Gate code is <1234>")])
        let one = english.render(chat)
        #expect(one.title == "Site Team: 1 new message" && one.body == "Dana Kim: Gate code is <1234>")
        let german = try await Self.catalog.template(for: .digest, locale: "de", tenant: nil)
        let sieben = german.render(TemplateVariables.sampleDigest)
        #expect(sieben.title == "Field Ops: 7 Neuigkeiten")
        #expect(sieben.body == "Bob Lee hat Replace the pump seal begonnen · Carol Diaz bittet um Freigabe von Fence repair · und 5 weitere")
        let two = TemplateVariables.Digest(
            scope: "Field Ops", isChat: false,
            items: [.init(event: .activityApproved, actor: "Alice", name: "A"), .init(event: .activityOverdue, actor: "Alice", name: "B")])
        #expect(german.render(two).body == "Alice hat A freigegeben · B ist überfällig")
        #expect(english.render(two).title == "Field Ops: 2 updates" && english.render(two).body == "Alice approved A · B is overdue")
    }
}
