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
        let system = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"]
            .lazy.compactMap { try? String(contentsOfFile: $0, encoding: .utf8) }.first ?? ""
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("herald-ca-\(UUID().uuidString).pem").path
        guard FileManager.default.createFile(atPath: path, contents: Data((system + "\n" + extraPEM).utf8), attributes: [.posixPermissions: 0o600]) else {
            throw HTTPClientError(kind: .tls, message: "cannot write a combined CA bundle to \(path)")
        }
        self.extraPath = extra
        self.combinedPath = path
        self.stamp = stamp
    }

    /// Whether the extra file is not the one combined (replaced, edited or gone).
    var changed: Bool { FileStamp(path: extraPath) != stamp }

    func remove() { try? FileManager.default.removeItem(atPath: combinedPath) }
}
