import Foundation
import HeraldCore

/// Email as the environment configures it (docs/operating/configuration.md#email): the relay
/// (`HERALD_SMTP_URL`, its password in the URL or `HERALD_SMTP_PASSWORD_FILE`,
/// `HERALD_SMTP_ALLOW_PLAIN`), the sender (`HERALD_EMAIL_FROM`) and where links lead
/// (`HERALD_APP_URL`, `HERALD_PUBLIC_URL`). The password is never shown: `description` names
/// the relay without it.
public struct EmailSettings: Sendable, Equatable, CustomStringConvertible {
    public var smtp: SMTPClient.Settings
    public var from: EmailMessage.Mailbox
    /// The apps' web address: an item's link is this and its path.
    public var appURL: String
    /// `herald serve` as people reach it: the one-click unsubscribe address is there.
    public var publicURL: String

    public var description: String {
        let account = smtp.username.map { "\($0)@" } ?? ""
        return "\(smtp.url.replacingOccurrences(of: "://", with: "://\(account)")) from \(from.address)"
    }

    public init(smtp: SMTPClient.Settings, from: EmailMessage.Mailbox, appURL: String, publicURL: String) {
        self.smtp = smtp
        self.from = from
        self.appURL = appURL
        self.publicURL = publicURL
    }

    /// The settings, or one line saying what is missing or wrong.
    public static func from(_ environment: [String: String]) -> Result<EmailSettings, PushConfigurationError> {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        guard let text = value("HERALD_SMTP_URL") else {
            return .failure(PushConfigurationError("email is not configured: set HERALD_SMTP_URL (smtps://host:465 or smtp://host:587)"))
        }
        guard var parts = URLComponents(string: text), let scheme = parts.scheme?.lowercased(), scheme == "smtp" || scheme == "smtps",
            let host = parts.host, !host.isEmpty, parts.path.isEmpty || parts.path == "/"
        else {
            return .failure(PushConfigurationError("HERALD_SMTP_URL is not smtps://host[:port] or smtp://host[:port]"))
        }
        let username = parts.user.flatMap { $0.removingPercentEncoding }
        var password = parts.password.flatMap { $0.removingPercentEncoding }
        if let file = value("HERALD_SMTP_PASSWORD_FILE") {
            guard let read = try? String(contentsOfFile: file, encoding: .utf8) else {
                return .failure(PushConfigurationError("cannot read HERALD_SMTP_PASSWORD_FILE \(file)"))
            }
            password = read.trimmingCharacters(in: .newlines)
        }
        parts.user = nil
        parts.password = nil
        parts.path = ""
        parts.port = parts.port ?? (scheme == "smtps" ? 465 : 587)
        guard let url = parts.string else { return .failure(PushConfigurationError("HERALD_SMTP_URL is not a URL")) }
        guard let fromText = value("HERALD_EMAIL_FROM"), let from = mailbox(fromText) else {
            return .failure(PushConfigurationError("email needs HERALD_EMAIL_FROM: an address, or \"Name <address>\""))
        }
        guard let appURL = value("HERALD_APP_URL").map(trimmedURL), appURL.hasPrefix("https://") || appURL.hasPrefix("http://") else {
            return .failure(PushConfigurationError("email needs HERALD_APP_URL: the apps' web address, which an email's link leads to"))
        }
        let publicURL = value("HERALD_PUBLIC_URL").map(trimmedURL) ?? appURL
        let smtp = SMTPClient.Settings(
            url: url, username: username, password: password, allowPlain: value("HERALD_SMTP_ALLOW_PLAIN") == "1",
            caFile: value("HERALD_CA_FILE"))
        return .success(EmailSettings(smtp: smtp, from: from, appURL: appURL, publicURL: publicURL))
    }

    static func trimmedURL(_ text: String) -> String { text.hasSuffix("/") ? String(text.dropLast()) : text }

    /// `Name <address>` or a bare address.
    static func mailbox(_ text: String) -> EmailMessage.Mailbox? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let open = trimmed.lastIndex(of: "<"), trimmed.hasSuffix(">") {
            let address = String(trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)])
            let name = trimmed[..<open].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            return isAddress(address) ? EmailMessage.Mailbox(address: address, name: name.isEmpty ? nil : name) : nil
        }
        return isAddress(trimmed) ? EmailMessage.Mailbox(address: trimmed) : nil
    }

    /// `local@domain`: printable ASCII without the characters that end an address in a header,
    /// a domain with a dot (or `localhost`).
    static func isAddress(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains(".") || parts[1] == "localhost" else { return false }
        let forbidden = Set("<>()[],;:\\\"".unicodeScalars)
        return text.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7f && !forbidden.contains($0) }
    }
}
