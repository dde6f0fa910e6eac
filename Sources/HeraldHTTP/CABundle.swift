import Foundation

/// The certificate authorities a TLS client trusts: the system's plus an extra PEM file
/// (`HERALD_CA_FILE`), combined into a private temporary file that libcurl reads.
///
/// The extra file may be replaced while a worker runs (a test endpoint restarted with a new
/// CA, a rotated corporate proxy certificate): `changed` notices a new modification time,
/// size or inode, and the client then combines it again, into a new file (libcurl caches
/// the store it built from a path).
struct CABundle: Sendable {
    let extraPath: String
    let combinedPath: String
    private let stamp: FileStamp

    init(extra: String) throws {
        guard let extraPEM = try? String(contentsOfFile: extra, encoding: .utf8), let stamp = FileStamp(path: extra) else {
            throw HTTPClientError(kind: .tls, message: "cannot read the CA file \(extra)")
        }
        let system =
            ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"]
            .lazy.compactMap { try? String(contentsOfFile: $0, encoding: .utf8) }.first ?? ""
        Self.removeOrphans()
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(Self.prefix)\(getpid())-\(UUID().uuidString).pem").path
        guard FileManager.default.createFile(atPath: path, contents: Data((system + "\n" + extraPEM).utf8), attributes: [.posixPermissions: 0o600])
        else {
            throw HTTPClientError(kind: .tls, message: "cannot write a combined CA bundle to \(path)")
        }
        self.extraPath = extra
        self.combinedPath = path
        self.stamp = stamp
    }

    /// Whether the extra file is not the one combined (replaced, edited or gone).
    var changed: Bool { FileStamp(path: extraPath) != stamp }

    func remove() { try? FileManager.default.removeItem(atPath: combinedPath) }

    /// Combined files are named for the process that wrote them: `herald-ca-PID-UUID.pem`.
    static let prefix = "herald-ca-"

    /// Removes the combined files of processes that are gone. A client removes its own when
    /// it shuts down, but a process killed outright (SIGKILL, the OOM killer) cannot.
    static func removeOrphans() {
        let directory = FileManager.default.temporaryDirectory
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(".pem") {
            let rest = name.dropFirst(prefix.count)
            guard let dash = rest.firstIndex(of: "-"), let pid = pid_t(rest[..<dash]), pid > 0 else { continue }
            // Gone: no such process (a process of another user answers EPERM, and stays).
            if kill(pid, 0) != 0, errno == ESRCH {
                try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
            }
        }
    }
}
