import Foundation
import Testing

@testable import HeraldEmulator
@testable import HeraldHTTP

/// A client given an extra CA file combines it with the system's CAs into a temporary file
/// that libcurl reads. Every worker, emulator command and test makes such a client, so the
/// files must go when the client shuts down, not pile up in the temporary directory.
@Suite struct CABundleCleanupTests {
    @Test func theCombinedCAFilesAreRemovedWhenTheClientShutsDown() throws {
        let caFile = FileManager.default.temporaryDirectory.appendingPathComponent("cleanup-ca-\(UUID().uuidString).pem")
        defer { try? FileManager.default.removeItem(at: caFile) }
        try EmulatorCertificates().caPEM.write(to: caFile, atomically: true, encoding: .utf8)
        let http = try HTTPClient(configuration: .init(extraCAFile: caFile.path), logger: quiet)
        let first = http.caBundlePaths
        #expect(first.count == 1)

        // A replaced CA file is combined into a second file; the first is kept until the end
        // (connections made with it may still be open).
        try EmulatorCertificates().caPEM.write(to: caFile, atomically: true, encoding: .utf8)
        #expect(try http.reloadCAFile())
        let both = http.caBundlePaths
        #expect(both.count == 2 && both.contains(first[0]))

        http.shutdown()
        #expect(http.caBundlePaths.isEmpty)
        for path in both { #expect(!FileManager.default.fileExists(atPath: path), "\(path) is left behind") }
        // The extra file itself is the caller's, and stays.
        #expect(FileManager.default.fileExists(atPath: caFile.path))
    }

    /// A process killed outright leaves its combined file: the next client removes the files
    /// of processes that are gone, and leaves those of processes still running.
    @Test func theFilesOfProcessesThatAreGoneAreRemovedByTheNextClient() throws {
        let directory = FileManager.default.temporaryDirectory
        let orphan = directory.appendingPathComponent("\(CABundle.prefix)\(Int32.max - 1)-\(UUID().uuidString).pem")
        let ours = directory.appendingPathComponent("\(CABundle.prefix)\(getpid())-\(UUID().uuidString).pem")
        for file in [orphan, ours] { #expect(FileManager.default.createFile(atPath: file.path, contents: Data("x".utf8))) }
        defer { try? FileManager.default.removeItem(at: ours) }
        let caFile = directory.appendingPathComponent("orphans-ca-\(UUID().uuidString).pem")
        defer { try? FileManager.default.removeItem(at: caFile) }
        try EmulatorCertificates().caPEM.write(to: caFile, atomically: true, encoding: .utf8)

        let http = try HTTPClient(configuration: .init(extraCAFile: caFile.path), logger: quiet)
        defer { http.shutdown() }
        #expect(!FileManager.default.fileExists(atPath: orphan.path))
        #expect(FileManager.default.fileExists(atPath: ours.path))
        #expect(http.caBundlePaths.allSatisfy { $0.contains("/\(CABundle.prefix)\(getpid())-") })
    }
}
