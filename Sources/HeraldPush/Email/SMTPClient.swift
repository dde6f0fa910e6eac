import CCurl
import Dispatch
import Foundation
import Synchronization

/// Submits emails to one relay over SMTP with libcurl (`smtps://` with TLS from the start, or
/// `smtp://` upgraded with STARTTLS, required unless plain is allowed). A few lanes, each one
/// libcurl handle on a queue of its own: a lane's connection is kept for its next message, and
/// a relay that hangs holds a lane until the timeout, never the caller's threads.
public final class SMTPClient: Sendable {
    public struct Settings: Sendable, Equatable {
        /// `smtps://host:465` or `smtp://host:587`, without credentials.
        public var url: String
        public var username: String?
        public var password: String?
        /// Whether a relay that offers no TLS may be used in the clear (tests, the emulator).
        public var allowPlain: Bool
        /// Extra trusted certificate authorities (PEM), beside the system's.
        public var caFile: String?
        public var timeout: Duration
        public var lanes: Int

        public init(
            url: String, username: String? = nil, password: String? = nil, allowPlain: Bool = false, caFile: String? = nil,
            timeout: Duration = .seconds(10), lanes: Int = 4
        ) {
            self.url = url
            self.username = username
            self.password = password
            self.allowPlain = allowPlain
            self.caFile = caFile
            self.timeout = timeout
            self.lanes = lanes
        }
    }

    /// What the relay said, or why it said nothing.
    public enum Answer: Sendable, Equatable {
        /// The relay's last reply: its code and line (`250 2.0.0 Ok: queued as 4Fz…`).
        case replied(code: Int, text: String)
        /// No reply to the message (libcurl's words, and what kind of failure it was).
        case failed(String, Failure)
    }

    /// Why no reply came.
    public enum Failure: Sendable, Equatable {
        /// No connection (the relay's name, address or port), or no reply before the message
        /// went: it was not sent.
        case unreachable
        /// TLS was required and the relay offers none, or the handshake failed.
        case tlsRefused
        /// The message went (the relay had said `354` to `DATA`) and no reply came: it may have
        /// been taken.
        case noAnswer
    }

    let settings: Settings
    private let lanes: [Lane]
    private let turn = Atomic<Int>(0)

    public init(_ settings: Settings) {
        _ = Self.globalInit
        self.settings = settings
        lanes = (0..<max(1, settings.lanes)).map { Lane(index: $0) }
    }

    private static let globalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    /// Submits `message` (CRLF lines) from `sender` to `recipient`.
    public func send(_ message: String, from sender: String, to recipient: String) async -> Answer {
        let lane = lanes[turn.add(1, ordering: .relaxed).oldValue % lanes.count]
        let settings = settings
        return await withCheckedContinuation { done in
            lane.queue.async { done.resume(returning: lane.perform(message, from: sender, to: recipient, settings)) }
        }
    }

    /// One handle and the queue it is used on.
    final class Lane: @unchecked Sendable {
        let queue: DispatchQueue
        /// Used on `queue` only.
        private var easy: UnsafeMutableRawPointer?

        init(index: Int) { queue = DispatchQueue(label: "herald.smtp.\(index)") }

        deinit { if let easy { curl_easy_cleanup(easy) } }

        func perform(_ message: String, from sender: String, to recipient: String, _ settings: Settings) -> Answer {
            if easy == nil { easy = curl_easy_init() }
            guard let easy else { return .failed("libcurl could not create a handle", .unreachable) }
            // Options from scratch; the handle keeps its connection (libcurl's reset leaves it).
            curl_easy_reset(easy)
            let exchange = Exchange(Array(message.utf8))
            let context = Unmanaged.passRetained(exchange)
            defer { context.release() }
            let recipients: UnsafeMutablePointer<curl_slist>? = curl_slist_append(nil, "<\(recipient)>")
            defer { curl_slist_free_all(recipients) }
            _ = herald_easy_setopt_string(easy, CURLOPT_URL, settings.url)
            _ = herald_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
            _ = herald_easy_setopt_long(easy, CURLOPT_USE_SSL, Int(settings.allowPlain ? CURLUSESSL_TRY.rawValue : CURLUSESSL_ALL.rawValue))
            if let username = settings.username { _ = herald_easy_setopt_string(easy, CURLOPT_USERNAME, username) }
            if let password = settings.password { _ = herald_easy_setopt_string(easy, CURLOPT_PASSWORD, password) }
            if let caFile = settings.caFile {
                _ = herald_easy_setopt_string(easy, CURLOPT_CAINFO, caFile)
                _ = herald_easy_setopt_string(easy, CURLOPT_CAPATH, "/etc/ssl/certs")
            }
            let milliseconds = Int(settings.timeout.components.seconds * 1000 + settings.timeout.components.attoseconds / 1_000_000_000_000_000)
            _ = herald_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, milliseconds)
            _ = herald_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, milliseconds)
            _ = herald_easy_setopt_string(easy, CURLOPT_MAIL_FROM, "<\(sender)>")
            _ = herald_easy_setopt_slist(easy, CURLOPT_MAIL_RCPT, recipients)
            _ = herald_easy_setopt_long(easy, CURLOPT_UPLOAD, 1)
            _ = herald_easy_setopt_off_t(easy, CURLOPT_INFILESIZE_LARGE, curl_off_t(exchange.body.count))
            _ = herald_easy_setopt_pointer(easy, CURLOPT_READDATA, context.toOpaque())
            _ = herald_easy_setopt_data_callback(easy, CURLOPT_READFUNCTION) { buffer, size, count, context in
                guard let buffer, let context else { return 0 }
                return Unmanaged<Exchange>.fromOpaque(context).takeUnretainedValue().read(into: buffer, size * count)
            }
            // The relay's replies come as "headers": the last one is the answer to the message.
            _ = herald_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, context.toOpaque())
            _ = herald_easy_setopt_data_callback(easy, CURLOPT_HEADERFUNCTION) { data, size, count, context in
                guard let data, let context else { return size * count }
                let line = String(decoding: UnsafeRawBufferPointer(start: data, count: size * count), as: UTF8.self)
                Unmanaged<Exchange>.fromOpaque(context).takeUnretainedValue().lastReply = line.trimmingCharacters(in: .whitespacesAndNewlines)
                return size * count
            }
            let code = curl_easy_perform(easy)
            var replied = 0
            _ = herald_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &replied)
            // Options that point at this message's memory go with it.
            _ = herald_easy_setopt_slist(easy, CURLOPT_MAIL_RCPT, nil)
            if code == CURLE_OK { return .replied(code: replied, text: exchange.lastReply) }
            let words = String(cString: curl_easy_strerror(code))
            // A reply that refused the message (4xx, 5xx) is the relay's answer, not a failure to reach it.
            if replied >= 400 { return .replied(code: replied, text: exchange.lastReply.isEmpty ? words : exchange.lastReply) }
            switch code {
            case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_PROXY: return .failed(words, .unreachable)
            case CURLE_USE_SSL_FAILED, CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE:
                return .failed(words, .tlsRefused)
            default: return .failed(words, exchange.sentMessage ? .noAnswer : .unreachable)
            }
        }
    }

    /// The message being read by libcurl and the relay's last reply.
    final class Exchange: @unchecked Sendable {
        let body: [UInt8]
        private var offset = 0
        var lastReply = "" {
            didSet { if lastReply.hasPrefix("354") { sentMessage = true } }
        }
        /// Whether the relay said `354` to `DATA`: from then on the message is on its way.
        private(set) var sentMessage = false

        init(_ body: [UInt8]) { self.body = body }

        func read(into buffer: UnsafeMutablePointer<CChar>, _ room: Int) -> Int {
            let count = min(room, body.count - offset)
            guard count > 0 else { return 0 }
            body.withUnsafeBytes { bytes in
                guard let start = bytes.baseAddress else { return }
                UnsafeMutableRawPointer(buffer).copyMemory(from: start + offset, byteCount: count)
            }
            offset += count
            return count
        }
    }
}
