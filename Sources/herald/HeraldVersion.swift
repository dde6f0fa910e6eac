import ArgumentParser
import Foundation
import HeraldHTTP
import HeraldStore

enum HeraldVersion {
    static let number = "0.1.0"
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
        let curl = HTTPLibraries.curl
        let output = Output(
            herald: HeraldVersion.number, libpq: Store.libpqVersion, libcurl: curl.version, http2: curl.http2,
            nghttp2: HTTPLibraries.nghttp2, openssl: HTTPLibraries.openSSL)
        if options.json { return try printJSON(output) }
        let libcurl = "libcurl \(output.libcurl)\(curl.http2 ? " with HTTP/2" : ", no HTTP/2")"
        print("herald \(output.herald) (libpq \(output.libpq), \(libcurl), nghttp2 \(output.nghttp2), \(output.openssl))")
    }
}
