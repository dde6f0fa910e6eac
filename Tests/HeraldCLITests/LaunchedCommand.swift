import CSpawn
import Foundation
import Synchronization

/// A `herald …` (or any command) started with `posix_spawn`, not Foundation's `Process`: on
/// Linux, `Process.run()` in this toolchain reads past the end of a buffer while it lists
/// `/proc/self/fd`, and crashed the test process (a fresh-clone CI run, `SIGSEGV` in its
/// `memcpy`). A thread of its own waits for it with `waitpid`, so that no thread of the
/// cooperative pool is blocked: the command may need a lock another test holds, and that test
/// needs a thread to finish.
final class LaunchedCommand: Sendable {
    private struct State {
        /// The raw status `waitpid` gave, once it ended.
        var status: Int32?
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    let processIdentifier: Int32
    private let state = Mutex(State())

    /// Starts `executable` with stdin on /dev/null, stdout on `output` and stderr on `error`
    /// (either -1: /dev/null).
    init(_ executable: String, _ arguments: [String], environment: [String: String], output: Int32 = -1, error: Int32 = -1) throws {
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        guard null >= 0 else { throw HeraldCLI.SpawnFailure(message: "cannot open /dev/null: \(String(cString: strerror(errno)))") }
        defer { close(null) }
        var pid: pid_t = 0
        let spawned = HeraldCLI.withCStrings([executable] + arguments) { argv in
            HeraldCLI.withCStrings(environment.map { "\($0.key)=\($0.value)" }) { envp in
                herald_spawn_split(&pid, executable, argv, envp, output >= 0 ? output : null, error >= 0 ? error : null)
            }
        }
        guard spawned == 0 else { throw HeraldCLI.SpawnFailure(message: "cannot run \(executable): \(String(cString: strerror(spawned)))") }
        let child = pid
        processIdentifier = child
        Thread { [self] in
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0, errno == EINTR {}
            let waiters = state.withLock { state in
                state.status = status
                defer { state.waiters.removeAll() }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }.start()
    }

    var isRunning: Bool { state.withLock { $0.status == nil } }

    /// SIGTERM.
    func terminate() { kill(processIdentifier, SIGTERM) }

    /// SIGINT.
    func interrupt() { kill(processIdentifier, SIGINT) }

    /// Returns once the command has ended.
    func waitForExit() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ended = state.withLock { state in
                if state.status == nil { state.waiters.append(continuation) }
                return state.status != nil
            }
            if ended { continuation.resume() }
        }
    }

    /// The signal that ended it, 0 if it exited (`WTERMSIG`, which Swift does not import).
    private var signal: Int32 { (state.withLock { $0.status } ?? 0) & 0x7f }

    /// Its exit status, or the signal that ended it (as Foundation's `Process` says).
    var terminationStatus: Int32 {
        signal == 0 ? ((state.withLock { $0.status } ?? 0) >> 8) & 0xff : signal
    }

    var terminationReason: Process.TerminationReason { signal == 0 ? .exit : .uncaughtSignal }

    /// Whether SIGKILL ended it.
    var wasKilled: Bool { signal == SIGKILL }
}
