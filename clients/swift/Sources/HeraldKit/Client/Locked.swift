import Foundation

/// A value shared between tasks behind a lock (`Mutex` needs iOS 18 and macOS 15); the value
/// must be `Sendable`, since `current` hands a copy to any task.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    var current: Value { withLock { $0 } }
}
