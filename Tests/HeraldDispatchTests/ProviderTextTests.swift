import Foundation
import HeraldCore
import HeraldPostgres
import HeraldPush
import HeraldTestSupport
import Testing

@testable import HeraldDispatch
@testable import HeraldStore

/// What a provider says goes into history as it said it, whatever it holds. An error whose
/// message carried `\u0000` once failed every acknowledgement batch it was in (an array
/// literal cut short at the zero), so the worker retried that batch forever and sent nothing
/// more.
@Suite struct ProviderTextTests {
    /// FCM, as far as Herald can tell: every answer is the same 400 with a zero in its message,
    /// read by the real classifier.
    struct ZeroInTheMessage: PushGateway {
        func send(_ notification: PushNotification, provider: PushProvider, app: AppKind, expiration: Date?) async throws -> ProviderAnswer {
            let body = #"{"error": {"code": 400, "message": "Invalid value\u0000 at message.data", "status": "INVALID_ARGUMENT"}}"#
            return ProviderAnswer(FCMClassifier.classify(ProviderResponse(status: 400, body: body)), httpStatus: 400)
        }
    }

    @Test func anAnswerWithAZeroInItIsRecorded() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "chidi-phone", app: .member)
            _ = try await harness.assign()
            try await harness.withDispatcher(gateway: ZeroInTheMessage()) { dispatcher in
                try await dispatcher.run(.drain(horizon: .seconds(5)))
            }
            let (status, error) = try await harness.store.pool.query("SELECT status, last_error FROM deliveries")
                .single().decode((String, String?).self)
            #expect(status == "failed")
            #expect(error == "INVALID_ARGUMENT: Invalid value\u{FFFD} at message.data", "\(String(describing: error))")
        }
    }
}
