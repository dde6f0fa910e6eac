import CCurl
import Foundation

/// One request's state inside the curl loop.
///
/// Safety (`@unchecked Sendable`): the caller creates it and hands it to the loop thread
/// through the locked queue; from then on only the loop thread touches it. When the queue
/// refuses it, the caller alone still holds it.
final class Transfer: @unchecked Sendable {
    let id: Int
    let request: HTTPRequest
    private var continuation: CheckedContinuation<HTTPResponse, any Error>?
    var easy: UnsafeMutableRawPointer?
    var headerList: UnsafeMutablePointer<curl_slist>?
    var requestBody: UnsafeMutableRawBufferPointer?
    var status = 0
    var httpVersion = ""
    var headers: [String: String] = [:]
    var body: [UInt8] = []

    init(id: Int, request: HTTPRequest, continuation: CheckedContinuation<HTTPResponse, any Error>) {
        self.id = id
        self.request = request
        self.continuation = continuation
    }

    func finish(_ result: Result<HTTPResponse, any Error>) {
        continuation?.resume(with: result)
        continuation = nil
    }

    /// A response header line: a status line starts a new set of headers.
    func receiveHeader(_ line: String) {
        let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return }
        if trimmed.hasPrefix("HTTP/") {
            let parts = trimmed.split(separator: " ", maxSplits: 2)
            httpVersion = String(parts[0].dropFirst("HTTP/".count))
            status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            headers = [:]
            return
        }
        guard let colon = trimmed.firstIndex(of: ":") else { return }
        let name = trimmed[..<colon].lowercased()
        let value = trimmed[trimmed.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        headers[name] = headers[name].map { $0 + ", " + value } ?? value
    }

    /// Frees what libcurl held for this transfer.
    func release() {
        if let easy { curl_easy_cleanup(easy) }
        easy = nil
        if let headerList { curl_slist_free_all(headerList) }
        headerList = nil
        requestBody?.deallocate()
        requestBody = nil
    }
}
