import ArgumentParser
import CCurl
import CLibPQ
import Foundation
import HeraldHTTP

enum HeraldVersion {
    static let number = "0.1.0"

    /// `15.18` from libpq's `150018`.
    static var libpq: String {
        let version = Int(PQlibVersion())
        return "\(version / 10000).\(version % 10000)"
    }

    static var curl: (version: String, http2: Bool) {
        guard let info = curl_version_info(CURLVERSION_TENTH), let text = info.pointee.version else {
            return ("unknown", false)
        }
        return (String(cString: text), info.pointee.features & CURL_VERSION_HTTP2 != 0)
    }
}

struct VersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "version", abstract: "Print herald's version and the versions of libpq, libcurl, nghttp2 and OpenSSL it runs on.")

    @OptionGroup var options: GlobalOptions

    struct Output: Encodable {
        let herald: String
        let libpq: String
        let libcurl: String
        let http2: Bool
        let nghttp2: String
        let openssl: String
    }

    func run() throws {
        let curl = HeraldVersion.curl
        let output = Output(
            herald: HeraldVersion.number, libpq: HeraldVersion.libpq, libcurl: curl.version, http2: curl.http2,
            nghttp2: HTTPLibraries.nghttp2, openssl: HTTPLibraries.openSSL)
        if options.json { return try printJSON(output) }
        let libcurl = "libcurl \(output.libcurl)\(curl.http2 ? " with HTTP/2" : ", no HTTP/2")"
        print("herald \(output.herald) (libpq \(output.libpq), \(libcurl), nghttp2 \(output.nghttp2), \(output.openssl))")
    }
}
