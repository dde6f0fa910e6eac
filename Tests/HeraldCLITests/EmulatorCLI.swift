import Crypto
import Foundation
import HeraldEmulator
import HeraldPostgres
import HeraldTestSupport
import Testing

/// A migrated throwaway database, a running emulator, and a CLI configured for both (FCM
/// and APNs, through the emulator's `endpoint`), acting in tenant `acme`.
func withEmulatorCLI(
    endpoint: KeyPath<Emulator.Endpoints, String> & Sendable = \.https,
    _ body: @Sendable (HeraldCLI, PostgresPool, Emulator) async throws -> Void
) async throws {
    try await TestDatabase.with { pool, configuration in
        try await withTemporaryDirectory { home in
            try await Emulator.withRunning(logger: testLogger) { emulator, endpoints in
                let base = endpoints[keyPath: endpoint]
                let account = home.appendingPathComponent("sa.json")
                let ca = home.appendingPathComponent("ca.pem")
                let key = home.appendingPathComponent("AuthKey.p8")
                try emulator.serviceAccountJSON(tokenURI: base + "/token").write(to: account)
                try emulator.certificates.caPEM.write(to: ca, atomically: true, encoding: .utf8)
                try P256.Signing.PrivateKey().pemRepresentation.write(to: key, atomically: true, encoding: .utf8)
                let cli = HeraldCLI(
                    home: home,
                    extra: [
                        "HERALD_DATABASE_URL": configuration.connectionString, "HERALD_TENANT": "acme",
                        "GOOGLE_APPLICATION_CREDENTIALS": account.path, "HERALD_FCM_ENDPOINT": base, "HERALD_CA_FILE": ca.path,
                        "HERALD_APNS_KEY_FILE": key.path, "HERALD_APNS_KEY_ID": "KEY1234567", "HERALD_APNS_TEAM_ID": "TEAM123456",
                        "HERALD_APNS_TOPIC_MEMBER": "com.example.herald.member", "HERALD_APNS_TOPIC_MANAGER": "com.example.herald.manager",
                        "HERALD_APNS_ENDPOINT": base
                    ])
                let migrate = try await cli.run(["db", "migrate"])
                #expect(migrate.status == 0, "\(migrate.stderr)")
                try await body(cli, pool, emulator)
            }
        }
    }
}
