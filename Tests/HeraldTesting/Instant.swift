import Foundation
import Testing

/// An instant written in ISO 8601 (`2026-11-24T22:30:00Z`); fails the test for anything else.
public func instant(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Date {
    try #require(ISO8601DateFormatter().date(from: text), "not an ISO 8601 instant: \(text)", sourceLocation: sourceLocation)
}
