import Foundation
import HeraldTestSupport
import Testing

@Suite struct TemplateCLITests {
    func withCLI(_ body: (HeraldCLI, URL) async throws -> Void) async throws {
        try await TestDatabase.with { _, configuration in
            try await withTemporaryDirectory { home in
                let cli = HeraldCLI(home: home, extra: ["HERALD_DATABASE_URL": configuration.connectionString, "HERALD_TENANT": "acme"])
                #expect(try await cli.run(["db", "migrate"]).status == 0)
                #expect(try await cli.run(["tenant", "create", "acme"]).status == 0)
                #expect(try await cli.run(["user", "add", "root@acme.test", "--name", "Ada Admin", "--admin"]).status == 0)
                #expect(try await cli.run(["user", "add", "bob@acme.test", "--name", "Bob"]).status == 0)
                var admin = cli
                admin.environment["HERALD_ACTOR"] = "root@acme.test"
                try await body(admin, home)
            }
        }
    }

    func fields(_ output: String) -> [String: String] {
        var fields: [String: String] = [:]
        for line in output.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return fields
    }

    @Test func previewShowsWhatThePhoneShows() async throws {
        try await withTemporaryDirectory { home in
            let cli = HeraldCLI(home: home)
            let p0 = try await cli.run(["template", "preview", "activity.assigned", "--priority", "p0"])
            #expect(p0.status == 0, "\(p0.stderr)")
            #expect(fields(p0.stdout)["title"] == "Activity Update")
            #expect(
                fields(p0.stdout)["body"]
                    == "🔻P0🔻Nov 21, 2026 - Alice Moreau has assigned you a new activity with deadline Nov 28, 2026: Ship v2.")
            let tokyo = try await cli.run(["template", "preview", "activity.assigned", "--priority", "p1", "--time-zone", "Asia/Tokyo"])
            #expect(fields(tokyo.stdout)["body"]?.hasPrefix("Nov 22, 2026 - Alice Moreau") == true)
            let german = try await cli.run(["template", "preview", "activity.rejected", "--locale", "de", "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(german.stdout.utf8)) as? [String: String]
            #expect(object?["title"] == "Aktivitäts-Update")
            #expect(object?["body"] == "🔻P0🔻21. Nov. 2026 - Alice Moreau hat deine Aktivität zurückgegeben: Ship v2.")
            let unnamed = try await cli.run(["template", "preview", "chat.message.group", "--group", "", "--text", String(repeating: "y", count: 150)]
            )
            #expect(fields(unnamed.stdout)["title"] == "Alice Moreau in Group Chat")
            #expect(fields(unnamed.stdout)["body"] == String(repeating: "y", count: 100) + "...")
            let unknown = try await cli.run(["template", "preview", "activity.exploded"])
            #expect(unknown.status != 0 && unknown.stderr.contains("event \"activity.exploded\" is not one of"))
        }
    }

    @Test func aBrokenOverrideIsRefusedAndAWorkingOneChangesThePreviewUntilReset() async throws {
        try await withCLI { cli, home in
            let broken = home.appendingPathComponent("broken.mustache")
            try "Heads up\n---\n{{varaible}} for {{name}}\n".write(to: broken, atomically: true, encoding: .utf8)
            let refused = try await cli.run(["template", "set", "activity.assigned", "--file", broken.path])
            #expect(refused.status != 0)
            #expect(refused.stderr.split(separator: "\n").count == 1)
            #expect(refused.stderr.contains("unknown variable {{varaible}}"), "\(refused.stderr)")
            let unparsable = home.appendingPathComponent("unparsable.mustache")
            try "Heads up\n---\n{{#name}}never closed\n".write(to: unparsable, atomically: true, encoding: .utf8)
            #expect(try await cli.run(["template", "set", "activity.assigned", "--file", unparsable.path]).stderr.contains("does not parse"))
            #expect(try await cli.run(["template", "preview", "activity.assigned"]).stdout.contains("has assigned you"))

            let good = home.appendingPathComponent("good.mustache")
            try "Heads up\n---\n{{#isP0}}URGENT {{/isP0}}{{manager}} wants {{name}} by {{deadline}}\n".write(
                to: good, atomically: true, encoding: .utf8)
            let member = try await cli.run(["template", "set", "activity.assigned", "--file", good.path, "--as", "bob@acme.test"])
            #expect(member.status != 0 && member.stderr.contains("only a tenant admin"), "\(member.stderr)")
            let saved = try await cli.run(["template", "set", "activity.assigned", "--file", good.path])
            #expect(saved.status == 0, "\(saved.stderr)")
            let preview = try await cli.run(["template", "preview", "activity.assigned"])
            #expect(fields(preview.stdout)["title"] == "Heads up")
            #expect(fields(preview.stdout)["body"] == "URGENT Alice Moreau wants Ship v2 by Nov 28, 2026")
            #expect(fields(preview.stdout)["template"] == "en, tenant override")
            // Another locale and the defaults without a tenant are untouched.
            #expect(try await cli.run(["template", "preview", "activity.assigned", "--locale", "de"]).stdout.contains("zugewiesen"))
            let list = try await cli.run(["template", "list"])
            #expect(list.stdout.contains("override by root@acme.test"))
            let memberReset = try await cli.run(["template", "reset", "activity.assigned", "--as", "bob@acme.test"])
            #expect(memberReset.status != 0 && memberReset.stderr.contains("only a tenant admin"))

            let reset = try await cli.run(["template", "reset", "activity.assigned"])
            #expect(reset.status == 0 && reset.stdout.contains("restored the default"))
            #expect(fields(try await cli.run(["template", "preview", "activity.assigned"]).stdout)["title"] == "Activity Update")
            #expect(try await cli.run(["template", "reset", "activity.assigned"]).stdout.contains("there was no"))
        }
    }
}
