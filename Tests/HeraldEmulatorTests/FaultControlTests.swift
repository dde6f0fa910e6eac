import Foundation
import HeraldEmulator
import HeraldHTTP
import HeraldPush
import Logging
import Testing

/// `GET|PUT /emulator/faults`: a running emulator's faults changed over HTTP, as
/// `benchmarks/chaos` does to make the provider throttle, fail or hang for a while.
@Suite struct FaultControlTests {
    let quiet = Logger(label: "emulator.test", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test func faultsAreSetOverHTTPAndClearedAgain() async throws {
        try await Emulator.withRunning(logger: quiet) { emulator, endpoints in
            let http = try client(emulator)
            defer { http.shutdown() }
            let fcm = try provider(emulator, endpoints, http: http)
            func put(_ body: String) async throws -> HTTPResponse {
                try await http.send(
                    HTTPRequest(
                        method: "PUT", url: endpoints.https + "/emulator/faults", headers: [("content-type", "application/json")],
                        body: Array(body.utf8)))
            }
            let set = try await put(#"{"unavailable": 1, "throttled": 0, "retryAfter": 7, "latencyMs": 0}"#)
            #expect(set.status == 200)
            #expect(
                try await fcm.send(notification(token: "ok"))
                    == .retry(after: .seconds(7), reason: "UNAVAILABLE: The service is currently unavailable."))
            let shown = try await http.send(HTTPRequest(url: endpoints.https + "/emulator/faults"))
            let faults = try #require(try JSONSerialization.jsonObject(with: Data(shown.body)) as? [String: Any])
            #expect(faults["unavailable"] as? Double == 1 && faults["retryAfter"] as? Int == 7)
            #expect(try await put(#"{"unavailable": 0, "throttled": 0, "retryAfter": 1, "latencyMs": 0}"#).status == 200)
            guard case .delivered = try await fcm.send(notification(token: "ok")) else {
                Issue.record("a send after the faults were cleared was not delivered")
                return
            }
        }
    }

    @Test func faultsThatCannotBeAreRefusedAndChangeNothing() async throws {
        try await Emulator.withRunning(logger: quiet) { emulator, endpoints in
            let http = try client(emulator)
            defer { http.shutdown() }
            let fcm = try provider(emulator, endpoints, http: http)
            for body in [
                #"{"unavailable": 0.8, "throttled": 0.5, "retryAfter": 1, "latencyMs": 0}"#,
                #"{"unavailable": 0, "throttled": 0, "retryAfter": -1, "latencyMs": 0}"#,
                #"{"unavailable": 1}"#, "not json"
            ] {
                let answer = try await http.send(
                    HTTPRequest(
                        method: "PUT", url: endpoints.https + "/emulator/faults", headers: [("content-type", "application/json")],
                        body: Array(body.utf8)))
                #expect(answer.status == 400, "\(body)")
            }
            guard case .delivered = try await fcm.send(notification(token: "ok")) else {
                Issue.record("a refused setting changed the faults")
                return
            }
        }
    }
}
