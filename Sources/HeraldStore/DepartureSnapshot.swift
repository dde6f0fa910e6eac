import Foundation
import HeraldCore

/// A conversation as someone who left it goes on seeing it: as it was when they left. The
/// others in it and how far each had read, with no presence (what happened after they left
/// is not theirs to see).
struct DepartureSnapshot: Codable, Sendable {
    struct Participant: Codable, Sendable {
        let person: PersonReference
        let muted: Bool
        let lastReadSequence: Int64
        let lastReceivedSequence: Int64

        var record: ParticipantRecord {
            ParticipantRecord(
                person: person, muted: muted, lastReadSequence: lastReadSequence, lastReceivedSequence: lastReceivedSequence, viewing: false,
                online: false, lastSeen: nil)
        }
    }

    let name: String?
    let photoURL: String?
    let participants: [Participant]

    /// The conversation `conversation`, as it is, without the person `leaving`.
    init(leaving: UUID, from conversation: ConversationRecord) {
        name = conversation.name
        photoURL = conversation.photoURL
        participants = conversation.participants.filter { $0.person.id != leaving }.map {
            Participant(
                person: $0.person, muted: $0.muted, lastReadSequence: $0.lastReadSequence, lastReceivedSequence: $0.lastReceivedSequence)
        }
    }
}
