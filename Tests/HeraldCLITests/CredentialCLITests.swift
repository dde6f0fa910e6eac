import Foundation
import HeraldPostgres
import HeraldTestSupport
import Testing

/// `herald token` and `herald key` through the real binary.
@Suite struct CredentialCLITests {
    @Test func aTokenIsShownOnceListedWithoutItsSecretAndRevoked() async throws {
        try await TestDatabase.with { pool, configuration in
            try await withTemporaryDirectory { home in
                let cli = HeraldCLI(home: home, extra: ["HERALD_DATABASE_URL": configuration.connectionString, "HERALD_TENANT": "acme"])
                for arguments in [
                    ["db", "migrate"], ["tenant", "create", "acme", "--name", "Acme"], ["user", "add", "bob@acme.test", "--name", "Bob Stone"]
                ] {
                    let result = try await cli.run(arguments)
                    #expect(result.status == 0, "\(arguments): \(result.stderr)")
                }
                // The secret alone on the last line of standard output.
                let created = try await cli.run(["token", "create", "--user", "bob@acme.test", "--name", "Bob's Pixel", "--expires", "90d"])
                #expect(created.status == 0, "\(created.stderr)")
                let secret = try #require(created.stdout.split(separator: "\n").last.map(String.init))
                #expect(secret.hasPrefix("hrp_") && secret.count == 69, "\(created.stdout)")
                #expect(!created.stderr.contains(secret))

                let listed = try await cli.run(["token", "list"])
                #expect(listed.status == 0 && listed.stdout.contains("Bob's Pixel") && listed.stdout.contains("bob@acme.test"))
                #expect(!listed.stdout.contains(secret) && listed.stdout.contains(String(secret.prefix(16))))
                let json = try await cli.run(["token", "list", "--json"])
                let tokens = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
                let id = try #require(tokens.first?["id"] as? String)
                #expect(tokens.count == 1 && !json.stdout.contains(secret))

                // A key's secret, with --json; then revoking each, and a key id is no token.
                let key = try await cli.run(["key", "create", "--name", "billing backend", "--json"])
                let keyObject = try #require(try JSONSerialization.jsonObject(with: Data(key.stdout.utf8)) as? [String: Any])
                #expect((keyObject["secret"] as? String)?.hasPrefix("hrk_") == true)
                let keyID = try #require((keyObject["credential"] as? [String: Any])?["id"] as? String)
                let wrongKind = try await cli.run(["token", "revoke", keyID])
                #expect(wrongKind.status != 0 && wrongKind.stderr.contains("no token"), "\(wrongKind.stderr)")
                #expect(try await cli.run(["key", "revoke", keyID]).status == 0)
                let revoked = try await cli.run(["token", "revoke", id])
                #expect(revoked.status == 0 && revoked.stdout.contains("revoked"), "\(revoked.stderr)")
                #expect(try await cli.run(["token", "list"]).stdout.contains("revoked"))
                let count = try await pool.query("SELECT count(*) FROM credentials WHERE revoked_at IS NOT NULL").single().decode(Int.self, at: 0)
                #expect(count == 2)

                // Bad input: one line, nothing written.
                for arguments in [
                    ["token", "create", "--user", "nobody@acme.test"], ["token", "create", "--user", "bob@acme.test", "--expires", "10y"],
                    ["token", "create", "--user", "bob@acme.test", "--expires", "3000d"], ["token", "revoke", "not-an-id"],
                    ["key", "create", "--name", ""]
                ] {
                    let refused = try await cli.run(arguments)
                    #expect(refused.status != 0 && refused.stderr.split(separator: "\n").count == 1, "\(arguments): \(refused.stderr)")
                }
                let total = try await pool.query("SELECT count(*) FROM credentials").single().decode(Int.self, at: 0)
                #expect(total == 2)
            }
        }
    }
}
