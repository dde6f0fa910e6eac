import CLibPQ

/// A libpq handle in non-blocking mode and its socket: what is sent is flushed, and results
/// are read, without ever blocking the calling thread; while the server has not answered,
/// the task waits on `PostgresPoller`.
struct PostgresWire {
    let handle: OpaquePointer

    /// Waits until the connection's socket is ready. libpq closes the socket of a connection
    /// it has lost (and the number may then name another's): it is asked for every wait.
    private func wait(_ readiness: PostgresPoller.Readiness) async throws {
        let socket = PQsocket(handle)
        guard socket >= 0 else { throw lost(nil) }
        try await PostgresPoller.shared.wait(for: socket, readiness)
    }

    /// Sends everything libpq holds for the server. While the socket cannot take more, the
    /// server's answers are read meanwhile (it may be waiting for its own to be read).
    func flush() async throws {
        while true {
            switch PQflush(handle) {
            case 0: return
            case 1:
                try await wait([.readable, .writable])
                guard PQconsumeInput(handle) == 1 else { throw lost(nil) }
            default: throw lost(nil)
            }
        }
    }

    /// The next result, waiting for the server while it has not arrived; nil ends a
    /// command's results (and, when nothing is left, a failure of the connection).
    func nextResult() async throws -> OpaquePointer? {
        while PQisBusy(handle) == 1 {
            try await wait(.readable)
            // A failed read (the connection lost) leaves libpq's error for PQgetResult to
            // report, which it then does without waiting.
            guard PQconsumeInput(handle) == 1 else { break }
        }
        return PQgetResult(handle)
    }

    /// The error of a connection that failed on the way (libpq's reason).
    func lost(_ query: String?) -> PostgresError {
        let reason = firstLine(of: String(cString: PQerrorMessage(handle)).trimmingTrailingNewlines())
        return PostgresError(kind: .connection, message: reason.isEmpty ? "the connection to PostgreSQL was lost" : reason, query: query)
    }
}
