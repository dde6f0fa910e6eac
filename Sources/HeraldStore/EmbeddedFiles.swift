import Foundation

/// Files from the package folders compiled into the binary by the EmbedFiles plugin.
enum EmbeddedFiles {
    static func decode(_ encoded: [String: String]) -> [String: String] {
        encoded.compactMapValues { base64 in
            Data(base64Encoded: base64).map { String(decoding: $0, as: UTF8.self) }
        }
    }
}
