import CLibPQ

/// The libpq Herald runs on, as loaded at run time.
public enum LibPQ {
    /// `15.18` from libpq's `150018`.
    public static var version: String {
        let version = Int(PQlibVersion())
        return "\(version / 10000).\(version % 10000)"
    }
}
