import Crypto
import Foundation
import HeraldEmulator
import HeraldTestSupport
import Testing

@Suite struct PushCLITests {
    @Test func pushTestReportsTheProvidersAnswer() async throws {
        try await withTemporaryDirectory { folder in
            try await Emulator.withRunning(logger: testLogger) { emulator, endpoints in
                let account = folder.appendingPathComponent("sa.json")
                let ca = folder.appendingPathComponent("ca.pem")
                try emulator.serviceAccountJSON(tokenURI: endpoints.https + "/token").write(to: account)
                try emulator.certificates.caPEM.write(to: ca, atomically: true, encoding: .utf8)
                let cli = HeraldCLI(
                    home: folder,
                    extra: [
                        "GOOGLE_APPLICATION_CREDENTIALS": account.path, "HERALD_FCM_ENDPOINT": endpoints.https, "HERALD_CA_FILE": ca.path
                    ])
                let delivered = try await cli.run(["push", "test", "--token", "device-token-0123456789", "--title", "Tom & Jerry <3"])
                #expect(delivered.status == 0, "\(delivered.stderr)")
                #expect(delivered.stdout.contains("delivered"))
                #expect(!delivered.stdout.contains("device-token-0123456789"))
                #expect(await emulator.messages().map(\.title) == ["Tom & Jerry <3"])

                // An installation id goes as `message.fid`.
                let byFID = try await cli.run(["push", "test", "--fid", "cX3vT9qLRk2bYw8mN4pZa_"])
                #expect(byFID.status == 0, "\(byFID.stderr)")
                #expect(await emulator.messages().last.map { $0.address == "fid" && $0.payload.contains(#""fid":"cX3vT9qLRk2bYw8mN4pZa_""#) } == true)

                let dead = try await cli.run(["push", "test", "--token", "dead-0123456789", "--json"])
                #expect(dead.status == 2 && dead.stderr.isEmpty, "\(dead.stderr)")
                let object = try JSONSerialization.jsonObject(with: Data(dead.stdout.utf8)) as? [String: Any]
                #expect(object?["outcome"] as? String == "dead token" && object?["httpStatus"] as? Int == 404)

                // Without the emulator's CA the TLS check fails, and says so.
                var untrusting = cli
                untrusting.environment["HERALD_CA_FILE"] = nil
                let tls = try await untrusting.run(["push", "test", "--token", "device-token-0123456789"])
                #expect(tls.status != 0 && tls.stdout.contains("TLS"), "\(tls.stdout)\(tls.stderr)")
            }
        }
    }

    /// `herald push test` against a plain-HTTP FCM stand-in whose token endpoint is on the same
    /// server: delivered at once, whether the server speaks only h2c or only HTTP/1.1.
    @Test(arguments: [\Emulator.Endpoints.http2, \Emulator.Endpoints.http1])
    func pushTestWorksAgainstACleartextEndpoint(_ endpoint: KeyPath<Emulator.Endpoints, String> & Sendable) async throws {
        try await withTemporaryDirectory { folder in
            try await Emulator.withRunning(logger: testLogger) { emulator, endpoints in
                let base = endpoints[keyPath: endpoint]
                let account = folder.appendingPathComponent("sa.json")
                try emulator.serviceAccountJSON(tokenURI: base + "/token").write(to: account)
                let cli = HeraldCLI(home: folder, extra: ["GOOGLE_APPLICATION_CREDENTIALS": account.path, "HERALD_FCM_ENDPOINT": base])
                for attempt in 1...2 {
                    let result = try await cli.run(["push", "test", "--token", "tok-\(attempt)-0123456789", "--title", "Hello", "--body", "World"])
                    #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
                    #expect(result.stdout.contains("delivered"))
                }
                let versions = await emulator.messages().map(\.httpVersion)
                #expect(versions == Array(repeating: endpoint == \Emulator.Endpoints.http2 ? "2" : "1.1", count: 2))
            }
        }
    }

    @Test func pushTestReachesAPNsToo() async throws {
        try await withTemporaryDirectory { folder in
            // APNs tokens are hex, so the dead ones are marked by a hex prefix here.
            let faults = EmulatorConfiguration.Faults(deadTokenPrefix: "deadbeef")
            try await Emulator.withRunning(EmulatorConfiguration(faults: faults), logger: testLogger) { emulator, endpoints in
                let ca = folder.appendingPathComponent("ca.pem")
                let key = folder.appendingPathComponent("AuthKey.p8")
                try emulator.certificates.caPEM.write(to: ca, atomically: true, encoding: .utf8)
                try P256.Signing.PrivateKey().pemRepresentation.write(to: key, atomically: true, encoding: .utf8)
                let cli = HeraldCLI(
                    home: folder,
                    extra: [
                        "HERALD_APNS_KEY_FILE": key.path, "HERALD_APNS_KEY_ID": "KEY1234567", "HERALD_APNS_TEAM_ID": "TEAM123456",
                        "HERALD_APNS_TOPIC_MEMBER": "com.example.member", "HERALD_APNS_TOPIC_MANAGER": "com.example.manager",
                        "HERALD_APNS_ENDPOINT": endpoints.https, "HERALD_CA_FILE": ca.path
                    ])
                let sent = try await cli.run(["push", "test", "--provider", "apns", "--app", "manager", "--token", "a1b2c3d4e5f6a7b8", "--json"])
                #expect(sent.status == 0, "\(sent.stderr)")
                let object = try JSONSerialization.jsonObject(with: Data(sent.stdout.utf8)) as? [String: Any]
                #expect(object?["outcome"] as? String == "delivered" && object?["httpStatus"] as? Int == 200)
                #expect(await emulator.messages().first?.headers["apns-topic"] == "com.example.manager")
                let dead = try await cli.run(["push", "test", "--provider", "apns", "--token", "deadbeefa1b2c3d4"])
                #expect(dead.status != 0 && dead.stdout.contains("dead token"))
                let traversal = try await cli.run(["push", "test", "--provider", "apns", "--token", "../../../v1/projects/x/messages:send?x=#"])
                #expect(traversal.status != 0 && traversal.stderr.contains("hexadecimal"), "\(traversal.stderr)")
                #expect(await emulator.messages().count == 1)
                var keyless = cli
                keyless.environment["HERALD_APNS_KEY_FILE"] = folder.appendingPathComponent("missing.p8").path
                let missing = try await keyless.run(["push", "test", "--provider", "apns", "--token", "a1b2c3d4a1b2c3d4"])
                #expect(missing.status != 0 && missing.stderr.split(separator: "\n").count == 1 && missing.stderr.contains("does not exist"))
            }
        }
    }

    @Test func badServiceAccountsAreOneClearLine() async throws {
        try await withTemporaryDirectory { folder in
            let notJSON = folder.appendingPathComponent("bad.json")
            try "not json".write(to: notJSON, atomically: true, encoding: .utf8)
            let noKey = folder.appendingPathComponent("nokey.json")
            try #"{"type": "service_account", "project_id": "p", "client_email": "a@b.c", "private_key_id": "k"}"#
                .write(to: noKey, atomically: true, encoding: .utf8)
            let badPEM = folder.appendingPathComponent("badpem.json")
            try
                #"{"type": "service_account", "project_id": "p", "client_email": "a@b.c", "private_key_id": "k", "private_key": "-----BEGIN PRIVATE KEY-----\nSECRETMATERIAL\n-----END PRIVATE KEY-----\n"}"#
                .write(to: badPEM, atomically: true, encoding: .utf8)
            let cases: [(String, String)] = [
                ("/nonexistent/sa.json", "does not exist"), (notJSON.path, "not a JSON object"), (noKey.path, "no \"private_key\""),
                (badPEM.path, "not a readable RSA private key")
            ]
            for (path, needle) in cases {
                let result = try await HeraldCLI(home: folder, extra: ["GOOGLE_APPLICATION_CREDENTIALS": path]).run(["push", "test", "--token", "abc"]
                )
                #expect(result.status != 0)
                #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
                #expect(result.stderr.contains(needle), "\(result.stderr)")
                #expect(!result.stderr.contains("SECRETMATERIAL") && !result.stdout.contains("SECRETMATERIAL"))
            }
        }
    }
}
