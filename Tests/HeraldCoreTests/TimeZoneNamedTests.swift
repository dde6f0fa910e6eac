import Foundation
import HeraldCore
import Testing

/// The one rule for a person's clock (`TimeZone.named`).
struct TimeZoneNamedTests {
    @Test func aKnownZoneIsItselfAndAnUnknownOneIsUTC() {
        #expect(TimeZone.named("Europe/Berlin").identifier == "Europe/Berlin")
        #expect(TimeZone.named("Mars/Olympus_Mons").secondsFromGMT(for: Date()) == 0)
        #expect(TimeZone.named("").secondsFromGMT(for: Date(timeIntervalSince1970: 1_795_303_800)) == 0)
        #expect(TimeZone.named("UTC").secondsFromGMT() == 0)
    }
}
