import Foundation
import Testing

@testable import HeraldPostgres

@Suite struct UUIDTextTests {
    @Test func formatsAsPostgreSQLDoesLowercaseWithDashes() {
        let uuid = UUID(uuidString: "0193A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B")!
        #expect(UUIDText.format(uuid) == "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b")
        for _ in 0..<100 {
            let random = UUID()
            #expect(UUIDText.format(random) == random.uuidString.lowercased())
            #expect(UUIDText.parse(UUIDText.format(random)) == random)
            #expect(UUIDText.parse(random.uuidString) == random)
        }
    }

    @Test(arguments: [
        "", "0193a1b2c3d47e5f8a9b0c1d2e3f4a5b", "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5", "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5bb",
        "0193a1b2-c3d4-7e5f-8a9b+0c1d2e3f4a5b", "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5g", "{0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5}",
        "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5é"
    ])
    func refusesWhatIsNotCanonical(text: String) {
        #expect(UUIDText.parse(text) == nil)
    }

    @Test func aUUIDColumnDecodesThroughIt() throws {
        let uuid = UUID()
        #expect(try UUID(postgresText: UUIDText.format(uuid), type: .uuid) == uuid)
        #expect(throws: PostgresError.self) { try UUID(postgresText: "not a uuid", type: .uuid) }
    }
}
