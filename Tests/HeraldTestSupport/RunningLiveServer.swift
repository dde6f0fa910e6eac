import Foundation
import HeraldStore

extension Store {
    /// Runs `body` while `server` stamps itself alive every second, as `herald serve`'s upkeep
    /// does. A test that stamped once and then worked on a loaded machine outlived the stamp
    /// (`Store.liveServerLifetime`) and saw its own server taken for dead.
    public func whileLiveServerRuns<Result: Sendable>(
        _ server: UUID, _ body: () async throws -> Result
    ) async throws -> Result {
        try await stampLiveServer(server)
        let stamping = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                try? await stampLiveServer(server)
            }
        }
        defer { stamping.cancel() }
        return try await body()
    }
}
