import Foundation

/// CPU time, user and system, read from the kernel: this process (as a whole and by kind of
/// thread) and, when it runs on this machine, the PostgreSQL server (the postmaster and every
/// process it started, those that ended included).
struct CPUMeter: Sendable {
    /// The postmaster's process id, when `/proc` shows it.
    let postmaster: Int32?

    /// What a sample is split into for this process, by the threads' names.
    enum ThreadKind: String, CaseIterable, Sendable {
        /// `herald.postgres` and `herald.listen`: the poller that waits for every
        /// connection's answers, and the listener. (The connections' libpq calls themselves,
        /// sending statements and reading rows, run on the tasks that make them.)
        case databaseClient = "database client threads"
        /// `herald.http2` (HTTP/2 over TLS: nghttp2 and OpenSSL) and `herald.http` (libcurl:
        /// everything else), counted together.
        case httpClient = "HTTP client thread"
        /// Everything else: Swift's tasks (building requests, reading answers, the queue's logic).
        case tasks = "tasks"

        init(threadName: String) {
            switch threadName {
            case "herald.postgres", "herald.listen": self = .databaseClient
            case "herald.http", "herald.http2": self = .httpClient
            default: self = .tasks
            }
        }
    }

    struct Sample: Sendable {
        /// This process, in seconds (`getrusage`: threads that ended are included).
        var process: Double
        /// This process's live threads, by kind, in seconds.
        var threads: [ThreadKind: Double]
        /// The PostgreSQL server, in seconds.
        var server: Double?

        /// CPU spent from `earlier` to this sample, in microseconds per `items`: this
        /// process, its threads by kind (what threads that ended in between spent counts as
        /// tasks) and the server, labelled with `phase`.
        /// - Parameter byThread: split this process's share by thread (only when the same
        ///   threads lived through both samples).
        func perItem(since earlier: Sample, items: Int, phase: String, byThread: Bool = true) -> [String: Double] {
            guard items > 0 else { return [:] }
            let scale = 1_000_000 / Double(items)
            let total = process - earlier.process
            var result = ["worker \(phase)": total * scale]
            if let server, let before = earlier.server { result["postgres \(phase)"] = (server - before) * scale }
            guard byThread else { return result }
            var named = 0.0
            for kind in [ThreadKind.databaseClient, .httpClient] {
                let spent = max(0, (threads[kind] ?? 0) - (earlier.threads[kind] ?? 0))
                named += spent
                result["worker \(phase): \(kind.rawValue)"] = spent * scale
            }
            result["worker \(phase): \(ThreadKind.tasks.rawValue)"] = max(0, total - named) * scale
            return result
        }
    }

    /// A meter for the server behind `backend` (a connection's `pg_backend_pid()`): its
    /// parent is the postmaster. Without `/proc` access to it (another machine, another
    /// container) the server is not measured.
    init(backend: Int32?) {
        postmaster = backend.flatMap { Self.stat(of: "/proc/\($0)/stat") }.map { Int32($0.parent) }
    }

    func sample() -> Sample {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let process = Self.seconds(usage.ru_utime) + Self.seconds(usage.ru_stime)
        var threads: [ThreadKind: Double] = [:]
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        for task in tasks {
            guard let stat = Self.stat(of: "/proc/self/task/\(task)/stat") else { continue }
            let exact = Int32(task).flatMap(Self.threadSeconds)
            threads[ThreadKind(threadName: stat.name), default: 0] += exact ?? stat.ownSeconds
        }
        return Sample(process: process, threads: threads, server: postmaster.flatMap(serverSeconds))
    }

    /// The postmaster with what its ended children spent, and its live children. A child the
    /// postmaster reaps while the children are listed moves from the list to the
    /// postmaster's count of ended children unseen and is counted in neither (the likely
    /// cause of a fan-out that read 0.3 µs a delivery where its neighbours read 12): the list
    /// is read again until that count holds still across it.
    private func serverSeconds(_ postmaster: Int32) -> Double? {
        var result: Double?
        for _ in 0..<5 {
            guard let before = Self.stat(of: "/proc/\(postmaster)/stat") else { return nil }
            var total = before.ownSeconds + before.childrenSeconds
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            for entry in entries where entry.first?.isNumber == true {
                guard let stat = Self.stat(of: "/proc/\(entry)/stat"), stat.parent == postmaster else { continue }
                total += stat.ownSeconds
            }
            result = total
            guard let after = Self.stat(of: "/proc/\(postmaster)/stat"), after.childrenSeconds != before.childrenSeconds else { break }
        }
        return result
    }

    /// The fields of `/proc/…/stat` a meter needs.
    struct Stat {
        let name: String
        let parent: Int
        let ownSeconds: Double
        let childrenSeconds: Double
    }

    /// Reads a `stat` file: `pid (name) state ppid … utime stime cutime cstime …`; the name
    /// may hold spaces and parentheses, so the fields are counted from the last `)`.
    static func stat(of path: String) -> Stat? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")")
        else { return nil }
        let name = String(text[text.index(after: open)..<close])
        // After the name: state (3), ppid (4), … utime (14), stime (15), cutime (16), cstime (17).
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 14, let parent = Int(fields[1]), let user = Double(fields[11]), let system = Double(fields[12]),
            let childrenUser = Double(fields[13]), let childrenSystem = Double(fields[14])
        else { return nil }
        let tick = Double(sysconf(Int32(_SC_CLK_TCK)))
        return Stat(name: name, parent: parent, ownSeconds: (user + system) / tick, childrenSeconds: (childrenUser + childrenSystem) / tick)
    }

    /// A thread of this process's CPU time to the nanosecond, from its CPU clock (the clock
    /// `pthread_getcpuclockid` gives, made from the thread's id as glibc makes it). `stat`
    /// counts in ticks of 10 ms: a short run's HTTP thread (400 requests, 5 ms) read 0 or 10.
    static func threadSeconds(_ thread: Int32) -> Double? {
        // MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED): (~tid << 3) | CPUCLOCK_PERTHREAD_MASK | CPUCLOCK_SCHED.
        let clock = clockid_t((~thread) << 3 | 4 | 2)
        var time = timespec()
        guard clock_gettime(clock, &time) == 0 else { return nil }
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1_000_000_000
    }

    private static func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
}
