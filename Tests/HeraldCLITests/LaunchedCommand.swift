import CSpawn
import Foundation
import Synchronization

/// A long-running `herald …` started by `HeraldCLI.launch`, with `posix_spawn` (see
/// `HeraldCLI.execute` for why not Foundation's `Process`). A thread of its own waits for it
/// to end, so `isRunning` and `waitForExit()` never block the cooperative pool.
final class LaunchedCommand: Sendable {
    let processIdentifier: Int32
    /// The raw status `waitpid` gave, once it ended.
    private let ended = Mutex<Int32?>(nil)

    /// Starts `executable` with stdin and stderr on /dev/null and stdout on `output`.
    init(_ executable: String, _ arguments: [String], environment: [String: String], output: Int32) throws {
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        guard null >= 0 else { throw HeraldCLI.SpawnFailure(message: "cannot open /dev/null: \(String(cString: strerror(errno)))") }
        defer { close(null) }
        var pid: pid_t = 0
        let spawned = HeraldCLI.withCStrings([executable] + arguments) { argv in
            HeraldCLI.withCStrings(environment.map { "\($0.key)=\($0.value)" }) { envp in
                herald_spawn_split(&pid, executable, argv, envp, output >= 0 ? output : null, null)
            }
        }
        guard spawned == 0 else { throw HeraldCLI.SpawnFailure(message: "cannot run \(executable): \(String(cString: strerror(spawned)))") }
        let child = pid
        processIdentifier = child
        Thread { [self] in
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0, errno == EINTR {}
            ended.withLock { $0 = status }
        }.start()
    }

    var isRunning: Bool { ended.withLock { $0 == nil } }

    /// SIGTERM.
    func terminate() { kill(processIdentifier, SIGTERM) }

    /// SIGINT.
    func interrupt() { kill(processIdentifier, SIGINT) }

    /// Returns once the command has ended.
    func waitForExit() async {
        while isRunning { try? await Task.sleep(for: .milliseconds(20)) }
    }

    /// Its exit status, or the signal that ended it (as Foundation's `Process` says).
    var terminationStatus: Int32 {
        let status = ended.withLock { $0 } ?? 0
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : signal
    }

    var terminationReason: Process.TerminationReason {
        (ended.withLock { $0 } ?? 0) & 0x7f == 0 ? .exit : .uncaughtSignal
    }
}
