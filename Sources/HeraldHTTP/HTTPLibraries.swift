import CCurl
import CHTTP2

/// The versions of the C libraries that carry HTTP over TLS, as loaded at run time.
public enum HTTPLibraries {
    /// nghttp2's, e.g. `1.52.0`.
    public static var nghttp2: String {
        guard let info = nghttp2_version(0), let text = info.pointee.version_str else { return "unknown" }
        return String(cString: text)
    }

    /// OpenSSL's, e.g. `OpenSSL 3.0.19 27 Jan 2026`.
    public static var openSSL: String {
        guard let text = OpenSSL_version(Int32(OPENSSL_VERSION)) else { return "unknown" }
        return String(cString: text)
    }

    /// libcurl's, e.g. `7.88.1`, and whether it was built with HTTP/2.
    public static var curl: (version: String, http2: Bool) {
        guard let info = curl_version_info(CURLVERSION_TENTH), let text = info.pointee.version else {
            return ("unknown", false)
        }
        return (String(cString: text), info.pointee.features & CURL_VERSION_HTTP2 != 0)
    }
}
