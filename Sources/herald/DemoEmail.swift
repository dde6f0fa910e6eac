import Foundation
import HeraldCore
import HeraldEmulator

/// An email the emulator's relay took, as a mail client shows it: From, To, Subject (RFC 2047
/// words decoded) and the text part (quoted-printable decoded). Only what Herald writes is read.
struct DemoEmail {
    var from = ""
    var to = ""
    var subject = ""
    var text = ""
    var hasHTML = false

    init(_ email: EmulatorSMTP.Email) {
        let parts = email.data.components(separatedBy: "\r\n\r\n")
        let head = (parts.first ?? "").replacingOccurrences(of: "\r\n ", with: " ")
        var boundary: String?
        for line in head.components(separatedBy: "\r\n") {
            let pair = line.split(separator: ":", maxSplits: 1).map { String($0).trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2 else { continue }
            switch pair[0].lowercased() {
            case "from": from = Self.words(pair[1])
            case "to": to = Self.words(pair[1])
            case "subject": subject = Self.words(pair[1])
            case "content-type":
                if let range = pair[1].range(of: "boundary=\"") {
                    boundary = String(pair[1][range.upperBound...].prefix { $0 != "\"" })
                }
            default: break
            }
        }
        let body = parts.dropFirst().joined(separator: "\r\n\r\n")
        guard let boundary else {
            text = Self.quotedPrintable(body)
            return
        }
        let sections = body.components(separatedBy: "--" + boundary)
        hasHTML = sections.contains { $0.contains("Content-Type: text/html") }
        if let plain = sections.first(where: { $0.contains("Content-Type: text/plain") }) {
            text = Self.quotedPrintable(plain.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n"))
        }
    }

    /// `=?UTF-8?B?…?=` words decoded, the rest as it is.
    static func words(_ value: String) -> String {
        value.split(separator: " ", omittingEmptySubsequences: false).map { word -> String in
            guard word.hasPrefix("=?UTF-8?B?"), word.hasSuffix("?="),
                let data = Data(base64Encoded: String(word.dropFirst(10).dropLast(2)))
            else { return String(word) }
            return String(decoding: data, as: UTF8.self)
        }.joined(separator: " ").replacingOccurrences(of: "?= =?", with: "")
    }

    /// Soft breaks joined, `=XX` bytes decoded.
    static func quotedPrintable(_ text: String) -> String {
        var bytes: [UInt8] = []
        let source = Array(text.replacingOccurrences(of: "=\r\n", with: "").utf8)
        var index = 0
        while index < source.count {
            if source[index] == UInt8(ascii: "="), index + 2 < source.count,
                let value = UInt8(String(decoding: source[(index + 1)...(index + 2)], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                index += 3
            } else {
                bytes.append(source[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// As the demo prints it.
    func shown(_ style: TerminalStyle) -> String {
        var lines = ["  ✉️  " + style.bold(TerminalText.escaped(subject)), "     " + style.dim("From: \(from) · To: \(to)")]
        lines += text.split(separator: "\n", omittingEmptySubsequences: false).map { "     " + TerminalText.escaped(String($0)) }
        return lines.joined(separator: "\n")
    }
}
