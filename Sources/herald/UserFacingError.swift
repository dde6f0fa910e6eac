import HeraldCluster
import HeraldEmulator
import HeraldRuntime
import HeraldStore

/// An error whose description is already one line a user can act on.
protocol UserFacingError: Error {
    var userMessage: String { get }
    var exitCode: Int32 { get }
}

extension UserFacingError {
    var exitCode: Int32 { 1 }
}

extension UserFacingError where Self: CustomStringConvertible {
    var userMessage: String { description }
}

extension MigrationError: UserFacingError {}
extension EmbeddedClusterError: UserFacingError {}
extension DatabaseError: UserFacingError {}
extension HeraldLoggingError: UserFacingError {}
extension EmulatorError: UserFacingError {}

/// A failure that is only its message.
struct UserFacingMessage: UserFacingError, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
