import Foundation
import Testing

@testable import HeraldPush

/// FCM HTTP v1 error bodies in the shape Google sends them.
enum FCMBodies {
    static func error(_ code: Int, _ status: String, _ message: String, fcm: String?, extra: String = "") -> String {
        var details: [String] = []
        if !extra.isEmpty { details.append(extra) }
        if let fcm { details.append(#"{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "\#(fcm)"}"#) }
        return #"{"error": {"code": \#(code), "message": "\#(message)", "status": "\#(status)", "details": [\#(details.joined(separator: ", "))]}}"#
    }
}

@Suite struct FCMClassifierTests {
    static let now = Date(timeIntervalSince1970: 1_795_303_800)

    @Test func anAcceptedMessageCarriesItsName() {
        let response = ProviderResponse(status: 200, body: #"{"name": "projects/demo/messages/0:1500415314455276%31bd1c9631bd1c96"}"#)
        #expect(FCMClassifier.classify(response) == .delivered(messageID: "projects/demo/messages/0:1500415314455276%31bd1c9631bd1c96"))
    }

    /// The name is read without a parser when the answer is the usual one; every other shape
    /// goes to the parser, and gives the same name.
    @Test(arguments: [
        (#"{"name": "projects/demo/messages/1"}"#, "projects/demo/messages/1"),
        ("{\n  \"name\": \"projects/demo/messages/2\"\n}\n", "projects/demo/messages/2"),
        (#"{"name":"projects/demo/messages/3","extra":true}"#, "projects/demo/messages/3"),
        (#"{"extra": 1, "name": "projects/demo/messages/4"}"#, "projects/demo/messages/4"),
        (#"{"name": "projects/demo/messages/\u0035"}"#, "projects/demo/messages/5"),
        (#"{"name": "projects/demo/messages/6\"quoted\""}"#, #"projects/demo/messages/6"quoted""#)
    ])
    func theNameIsReadFromAnyShapeOfAnswer(body: String, name: String) {
        #expect(FCMClassifier.classify(ProviderResponse(status: 200, body: body)) == .delivered(messageID: name))
    }

    @Test(arguments: ["", "{", #"{"name": 7}"#, #"{"name": "unterminated"#, "[]", #"{"other": "x"}"#, "not json"])
    func anAnswerWithoutANameIsDeliveredWithout(body: String) {
        #expect(FCMClassifier.simpleName(in: Array(body.utf8)) == nil)
        #expect(FCMClassifier.classify(ProviderResponse(status: 200, body: body)) == .delivered(messageID: nil))
    }

    @Test func unregisteredAndSenderMismatchAreDeadTokens() {
        let unregistered = ProviderResponse(
            status: 404, body: FCMBodies.error(404, "NOT_FOUND", "Requested entity was not found.", fcm: "UNREGISTERED"))
        #expect(FCMClassifier.classify(unregistered) == .deadToken(reason: "UNREGISTERED: Requested entity was not found."))
        let mismatch = ProviderResponse(status: 403, body: FCMBodies.error(403, "PERMISSION_DENIED", "SenderId mismatch", fcm: "SENDER_ID_MISMATCH"))
        #expect(FCMClassifier.classify(mismatch) == .deadToken(reason: "SENDER_ID_MISMATCH: SenderId mismatch"))
    }

    @Test func invalidArgumentIsADeadTokenOnlyWhenItIsAboutTheToken() {
        let token = ProviderResponse(
            status: 400,
            body: FCMBodies.error(
                400, "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token", fcm: "INVALID_ARGUMENT"))
        guard case .deadToken = FCMClassifier.classify(token) else {
            Issue.record("expected a dead token")
            return
        }
        let field = ProviderResponse(
            status: 400,
            body: FCMBodies.error(
                400, "INVALID_ARGUMENT", "Request contains an invalid argument.", fcm: "INVALID_ARGUMENT",
                extra:
                    #"{"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [{"field": "message.token", "description": "Invalid registration token"}]}"#
            ))
        guard case .deadToken = FCMClassifier.classify(field) else {
            Issue.record("expected a dead token from the field violation")
            return
        }
        let data = ProviderResponse(
            status: 400,
            body: FCMBodies.error(
                400, "INVALID_ARGUMENT", "Invalid value at 'message.data[0].value' (TYPE_STRING), 1", fcm: nil,
                extra: #"{"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [{"field": "message.data[0].value"}]}"#))
        #expect(FCMClassifier.classify(data) == .badRequest(reason: "INVALID_ARGUMENT: Invalid value at 'message.data[0].value' (TYPE_STRING), 1"))
    }

    @Test func unavailableAndInternalRetryHonouringRetryAfter() {
        let unavailable = ProviderResponse(
            status: 503, headers: ["Retry-After": "17"],
            body: FCMBodies.error(503, "UNAVAILABLE", "The service is currently unavailable.", fcm: "UNAVAILABLE"))
        #expect(
            FCMClassifier.classify(unavailable, now: Self.now)
                == .retry(after: .seconds(17), reason: "UNAVAILABLE: The service is currently unavailable."))
        let internalError = ProviderResponse(status: 500, body: FCMBodies.error(500, "INTERNAL", "Internal error encountered.", fcm: "INTERNAL"))
        #expect(FCMClassifier.classify(internalError) == .retry(after: nil, reason: "INTERNAL: Internal error encountered."))
        let date = ProviderResponse(
            status: 503, headers: ["retry-after": "Sat, 21 Nov 2026 23:31:00 GMT"],
            body: FCMBodies.error(503, "UNAVAILABLE", "busy", fcm: "UNAVAILABLE"))
        #expect(FCMClassifier.classify(date, now: Self.now) == .retry(after: .seconds(60), reason: "UNAVAILABLE: busy"))
    }

    @Test func quotaExceededWaitsAtLeastAMinute() {
        let body = FCMBodies.error(429, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric", fcm: "QUOTA_EXCEEDED")
        #expect(
            FCMClassifier.classify(ProviderResponse(status: 429, headers: ["Retry-After": "5"], body: body))
                == .retry(after: .seconds(60), reason: "QUOTA_EXCEEDED: Quota exceeded for quota metric"))
        #expect(
            FCMClassifier.classify(ProviderResponse(status: 429, headers: ["Retry-After": "120"], body: body))
                == .retry(after: .seconds(120), reason: "QUOTA_EXCEEDED: Quota exceeded for quota metric"))
        #expect(
            FCMClassifier.classify(ProviderResponse(status: 429, body: body))
                == .retry(after: .seconds(60), reason: "QUOTA_EXCEEDED: Quota exceeded for quota metric"))
    }

    @Test func thirdPartyAuthErrorIsConfiguration() {
        let body = FCMBodies.error(401, "UNAUTHENTICATED", "Auth error from APNS or Web Push Service", fcm: "THIRD_PARTY_AUTH_ERROR")
        #expect(
            FCMClassifier.classify(ProviderResponse(status: 401, body: body))
                == .configurationError(reason: "THIRD_PARTY_AUTH_ERROR: Auth error from APNS or Web Push Service"))
    }

    @Test func aPlain401MeansTheAccessTokenExpired() {
        let body = #"{"error": {"code": 401, "message": "Request had invalid authentication credentials.", "status": "UNAUTHENTICATED"}}"#
        #expect(
            FCMClassifier.classify(ProviderResponse(status: 401, body: body))
                == .credentialsExpired(reason: "UNAUTHENTICATED: Request had invalid authentication credentials."))
    }

    @Test func statusAloneDecidesWhenThereIsNoFcmError() {
        #expect(
            FCMClassifier.classify(ProviderResponse(status: 403, body: #"{"error": {"status": "PERMISSION_DENIED", "message": "FCM API disabled"}}"#))
                == .configurationError(reason: "PERMISSION_DENIED: FCM API disabled"))
        #expect(FCMClassifier.classify(ProviderResponse(status: 404, body: "<html>not found</html>")) == .configurationError(reason: "HTTP 404"))
        #expect(FCMClassifier.classify(ProviderResponse(status: 502, body: "")) == .retry(after: nil, reason: "HTTP 502"))
        #expect(FCMClassifier.classify(ProviderResponse(status: 418, body: "")) == .badRequest(reason: "HTTP 418"))
        let unknown = FCMBodies.error(400, "INVALID_ARGUMENT", "odd", fcm: "UNSPECIFIED_ERROR")
        #expect(FCMClassifier.classify(ProviderResponse(status: 400, body: unknown)) == .badRequest(reason: "UNSPECIFIED_ERROR: odd"))
    }
}

@Suite struct APNsClassifierTests {
    @Test(arguments: [
        (410, #"{"reason": "Unregistered", "timestamp": 1795303800000}"#, DeliveryOutcome.deadToken(reason: "Unregistered")),
        (400, #"{"reason": "BadDeviceToken"}"#, .deadToken(reason: "BadDeviceToken")),
        (400, #"{"reason": "DeviceTokenNotForTopic"}"#, .deadToken(reason: "DeviceTokenNotForTopic")),
        (403, #"{"reason": "ExpiredProviderToken"}"#, .credentialsExpired(reason: "ExpiredProviderToken")),
        (403, #"{"reason": "InvalidProviderToken"}"#, .configurationError(reason: "InvalidProviderToken")),
        (403, #"{"reason": "MissingProviderToken"}"#, .configurationError(reason: "MissingProviderToken")),
        (400, #"{"reason": "BadTopic"}"#, .configurationError(reason: "BadTopic")),
        (400, #"{"reason": "TopicDisallowed"}"#, .configurationError(reason: "TopicDisallowed")),
        (429, #"{"reason": "TooManyRequests"}"#, .retry(after: nil, reason: "TooManyRequests")),
        (500, #"{"reason": "InternalServerError"}"#, .retry(after: nil, reason: "InternalServerError")),
        (503, #"{"reason": "ServiceUnavailable"}"#, .retry(after: nil, reason: "ServiceUnavailable")),
        (503, #"{"reason": "Shutdown"}"#, .retry(after: nil, reason: "Shutdown")),
        (413, #"{"reason": "PayloadTooLarge"}"#, .badRequest(reason: "PayloadTooLarge")),
        (400, #"{"reason": "BadCollapseId"}"#, .badRequest(reason: "BadCollapseId")),
        (400, "", .badRequest(reason: "HTTP 400"))
    ])
    func reasonsMapToOutcomes(status: Int, body: String, expected: DeliveryOutcome) {
        #expect(APNsClassifier.classify(ProviderResponse(status: status, body: body)) == expected)
    }

    @Test func acceptedCarriesTheAPNsID() {
        #expect(
            APNsClassifier.classify(ProviderResponse(status: 200, headers: ["apns-id": "EC1BF194-B3B2-424A-89A9-5A918A6E6B5B"]))
                == .delivered(messageID: "EC1BF194-B3B2-424A-89A9-5A918A6E6B5B"))
    }

    @Test func retryAfterIsHonoured() {
        #expect(
            APNsClassifier.classify(ProviderResponse(status: 429, headers: ["Retry-After": "30"], body: #"{"reason": "TooManyRequests"}"#))
                == .retry(after: .seconds(30), reason: "TooManyRequests"))
    }
}

@Suite struct RetryAfterTests {
    static let now = Date(timeIntervalSince1970: 1_795_303_800)  // Sat, 21 Nov 2026 23:30:00 GMT

    @Test(arguments: [
        ("120", Duration.seconds(120)),
        (" 0 ", .seconds(0)),
        ("Sat, 21 Nov 2026 23:32:00 GMT", .seconds(120)),
        ("Saturday, 21-Nov-26 23:30:30 GMT", .seconds(30)),
        ("Sat Nov 21 23:31:00 2026", .seconds(60)),
        ("Fri, 20 Nov 2026 23:30:00 GMT", .seconds(0))
    ])
    func readableValues(value: String, expected: Duration) {
        #expect(RetryAfter.parse(value, now: Self.now) == expected)
    }

    @Test(arguments: ["", "soon", "-5", "1.5", "99999999999999999999999"])
    func unreadableValuesAreIgnored(value: String) {
        #expect(RetryAfter.parse(value, now: Self.now) == nil)
    }
}
