import Foundation

/// Threads of the emulator's own, on which its connections and handlers run.
///
/// The emulator stands in for a service on another machine. Run in process (tests, the
/// bench, the demo), its tasks would otherwise share Swift's cooperative pool, one thread per
/// core, with everything else in the process: while the callers' own tasks filled that
/// pool's queue (a whole test suite at once on two cores), requests already on the wire
/// waited there unanswered, tens of seconds on a loaded machine, and ran past the client's
/// timeouts. Here they wait only for the operating system's scheduler, like a real server.
final class EmulatorExecutor: TaskExecutor, @unchecked Sendable {
    /// One set of threads for every emulator in the process; they sleep when idle.
    static let shared = EmulatorExecutor(threads: max(2, ProcessInfo.processInfo.activeProcessorCount))

    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var jobs: [UnownedJob] = []
    private var next = 0

    private init(threads: Int) {
        for index in 0..<threads {
            let thread = Thread { self.work() }
            thread.name = "herald-emulator-\(index)"
            thread.start()
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while next == jobs.count { condition.wait() }
            let job = jobs[next]
            next += 1
            if next == jobs.count || next > 4_096 {
                jobs.removeFirst(next)
                next = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
