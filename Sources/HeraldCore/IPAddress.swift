#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An IPv4 or IPv6 address, as a URL names it or a name resolves to, and the range it lies in
/// (docs/webhooks.md: what a tenant's webhook may not reach).
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 or 16 bytes.
    public let bytes: [UInt8]
    public let description: String

    /// Reads `1.2.3.4`, `2001:db8::1` or `[2001:db8::1]`; nil for anything else.
    public init?(_ text: String) {
        var text = Substring(text)
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, String(text), &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, String(text), &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
        } else {
            return nil
        }
        description = String(text)
    }

    /// The address a URL's host names, read as a connection reads it: `[…]` is IPv6 (a zone
    /// is not an address); anything else that the C library reads as IPv4 is (`127.1`,
    /// `2130706433`, `0x7f.1`, `017700000001`, `0`, with or without a final dot); nil for a name.
    public init?(urlHost host: String) {
        if host.hasPrefix("[") {
            guard host.hasSuffix("]"), !host.contains("%") else { return nil }
            self.init(host)
            return
        }
        var text = host
        if text.hasSuffix(".") { text.removeLast() }
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isHexDigit || $0 == "." || $0 == "x" || $0 == "X") }) else { return nil }
        var v4 = in_addr()
        guard inet_aton(text, &v4) != 0 else { return nil }
        let bytes = withUnsafeBytes(of: &v4) { Array($0) }
        self.init(bytes.map(String.init).joined(separator: "."))
    }

    /// Where an address lies, for the decision to connect.
    public enum Range: String, Sendable {
        case `public`
        case loopback
        /// RFC 1918, IPv6 unique local, and the shared address space of carrier NAT.
        case `private`
        case linkLocal = "link-local"
        /// A cloud's instance metadata service.
        case metadata
        /// Unspecified, multicast, broadcast, reserved for documentation or benchmarks.
        case reserved
    }

    public var range: Range {
        if bytes.count == 4 { return Self.range(v4: bytes) }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) { return bytes[15] == 1 ? .loopback : .reserved }
        // An IPv4 address carried in IPv6 is judged as what it carries: mapped
        // (`::ffff:0:0/96`), translated (`::ffff:0:0:0/96`), the old compatible form (`::/96`),
        // NAT64's well-known prefix (`64:ff9b::/96`), and 6to4 (`2002::/16`, in bits 16–47).
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF
            || bytes[0..<8].allSatisfy({ $0 == 0 }) && bytes[8] == 0xFF && bytes[9] == 0xFF && bytes[10] == 0 && bytes[11] == 0
            || bytes[0..<12].allSatisfy({ $0 == 0 })
            || bytes[0..<12] == [0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0]
        {
            return Self.range(v4: Array(bytes[12..<16]))
        }
        if bytes[0] == 0x20 && bytes[1] == 0x02 { return Self.range(v4: Array(bytes[2..<6])) }
        // NAT64 for local use (`64:ff9b:1::/48`), Teredo (`2001::/32`, its IPv4 hidden) and the
        // discard prefix (`100::/64`): no webhook of a tenant's goes through them.
        if bytes[0..<6] == [0x00, 0x64, 0xFF, 0x9B, 0x00, 0x01] || bytes[0..<4] == [0x20, 0x01, 0x00, 0x00]
            || bytes[0..<8] == [0x01, 0x00, 0, 0, 0, 0, 0, 0]
        {
            return .reserved
        }
        // AWS's metadata service over IPv6: fd00:ec2::254.
        if bytes == [0xFD, 0x00, 0x0E, 0xC2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54] { return .metadata }
        if bytes[0] & 0xFE == 0xFC { return .private }
        if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 { return .linkLocal }
        // Site-local (`fec0::/10`, deprecated, still routed inside some networks).
        if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0xC0 { return .private }
        if bytes[0] == 0xFF { return .reserved }
        // Documentation (2001:db8::/32).
        if bytes[0..<4] == [0x20, 0x01, 0x0D, 0xB8] { return .reserved }
        return .public
    }

    private static func range(v4 b: [UInt8]) -> Range {
        switch (b[0], b[1], b[2], b[3]) {
        // Metadata services: AWS, GCP, Azure and others (169.254.169.254), Azure's wire
        // server, Alibaba's.
        case (169, 254, 169, 254), (168, 63, 129, 16), (100, 100, 100, 200): return .metadata
        case (127, _, _, _): return .loopback
        case (10, _, _, _), (172, 16...31, _, _), (192, 168, _, _), (100, 64...127, _, _): return .private
        case (169, 254, _, _): return .linkLocal
        case (0, _, _, _), (224...255, _, _, _), (192, 0, 0, _), (192, 0, 2, _), (198, 18...19, _, _), (198, 51, 100, _), (203, 0, 113, _):
            return .reserved
        default: return .public
        }
    }
}
