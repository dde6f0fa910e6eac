import Foundation

extension Thread {
    /// Starts a thread named `name` where the kernel sees it too (`top -H`, `herald bench`):
    /// Foundation keeps a name set before `start()` to itself, so the thread also writes it to
    /// its own `comm` (at most 15 bytes are kept).
    static func start(named name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            try? name.write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
            body()
        }
        thread.name = name
        thread.start()
    }
}
