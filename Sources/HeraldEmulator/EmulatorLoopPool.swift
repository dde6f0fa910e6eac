import NIOPosix
import Synchronization

/// Event loops for emulators, each group used by one running emulator at a time, and kept
/// for the next one instead of shut down.
///
/// An emulator's loops outlive its listeners by an unknown moment: Hummingbird ends a
/// server's graceful shutdown in a task of its own, which the emulator cannot await, and the
/// last thing that task does (releasing NIO's `ServerQuiescingHelper`, which fails a promise
/// already fulfilled) schedules work on the listener's loop. Shut down by then, the loop
/// refuses it ("Cannot schedule tasks on an EventLoop that has already shut down", which
/// later NIO versions turn into a crash, as `SWIFTNIO_STRICT=1` does now). A loop that is
/// never shut down takes it, and does nothing with it. A group goes back only once every
/// connection on it has closed, so that no emulator shares its loops with another's work. A
/// process holds at most as many groups as it ever ran emulators at once, plus the rare one
/// whose connections outlived their emulator.
enum EmulatorLoopPool {
    private static let idle = Mutex<[MultiThreadedEventLoopGroup]>([])

    /// A group of two loops no running emulator uses.
    static func take() -> MultiThreadedEventLoopGroup {
        idle.withLock { $0.popLast() } ?? MultiThreadedEventLoopGroup(numberOfThreads: 2)
    }

    /// Back for the next emulator, once every connection on it has closed.
    static func giveBack(_ group: MultiThreadedEventLoopGroup) {
        idle.withLock { $0.append(group) }
    }
}
