import CHTTP2

/// An OpenSSL context for HTTP/2 client connections: the system's CAs plus an optional
/// extra PEM file, peer verification on, TLS 1.2 or later, ALPN offering `h2` and
/// `http/1.1` (the server's pick says whether the origin speaks HTTP/2).
///
/// Connections keep a reference to the context they were made with (OpenSSL counts them),
/// so a context may be replaced while connections made from the old one are open.
final class TLSContext: @unchecked Sendable {
    // Safety: the context is configured in `init` and only read afterwards; OpenSSL allows
    // creating connections from one context on any thread.
    let context: OpaquePointer
    /// The extra CA file and what it was when read.
    let extraCAFile: String?
    private let stamp: FileStamp?

    /// - Throws: `HTTPClientError(.tls)` when OpenSSL cannot make a context or the extra
    ///   CA file cannot be read.
    init(extraCAFile: String?) throws {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw HTTPClientError(kind: .tls, message: "OpenSSL could not create a TLS context")
        }
        self.context = context
        self.extraCAFile = extraCAFile
        stamp = extraCAFile.flatMap { FileStamp(path: $0) }
        _ = herald_ssl_ctx_set_min_tls12(context)
        _ = herald_ssl_ctx_set_partial_writes(context)
        // Servers answer many streams in many small records: read them in few system calls.
        _ = herald_ssl_ctx_set_read_ahead(context)
        SSL_CTX_set_default_read_buffer_len(context, 64 * 1024)
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        SSL_CTX_set_default_verify_paths(context)
        if let extraCAFile {
            guard stamp != nil, SSL_CTX_load_verify_locations(context, extraCAFile, nil) == 1 else {
                ERR_clear_error()
                SSL_CTX_free(context)
                throw HTTPClientError(kind: .tls, message: "cannot read the CA file \(extraCAFile)")
            }
        }
        let protocols: [UInt8] = [2] + Array("h2".utf8) + [8] + Array("http/1.1".utf8)
        _ = protocols.withUnsafeBufferPointer { SSL_CTX_set_alpn_protos(context, $0.baseAddress, UInt32($0.count)) }
    }

    deinit { SSL_CTX_free(context) }

    /// Whether the extra CA file is not the one read (replaced, edited or gone).
    var changed: Bool { extraCAFile.map { FileStamp(path: $0) != stamp } ?? false }
}
