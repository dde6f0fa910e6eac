import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The unprivileged account that runs the embedded server when herald runs as root.
public struct ServerAccount: Sendable {
    static let runuser = FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser") ? "/usr/sbin/runuser" : "/sbin/runuser"

    public let name: String
    public let uid: uid_t
    public let gid: gid_t

    /// The account named `name`, or nil when there is none.
    public init?(name: String) {
        // getpwnam_r: getpwnam's static buffer is shared by every thread.
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        self.name = name
        self.uid = entry.pw_uid
        self.gid = entry.pw_gid
    }

    /// Whether this account may pass through every folder down to `path`.
    func canTraverse(to path: String) -> Bool {
        var current = URL(fileURLWithPath: path).standardizedFileURL
        var folders: [String] = []
        while current.path != "/" {
            folders.append(current.path)
            current.deleteLastPathComponent()
        }
        for folder in folders {
            var info = stat()
            // A folder still to be created will be ours to set.
            guard stat(folder, &info) == 0 else { continue }
            let mode = info.st_mode
            let allowed =
                (info.st_uid == uid && mode & S_IXUSR != 0) || (info.st_gid == gid && mode & S_IXGRP != 0)
                || mode & S_IXOTH != 0
            if !allowed { return false }
        }
        return true
    }

    /// Hands a folder to this account.
    func own(_ path: String) throws {
        guard chown(path, uid, gid) == 0 else {
            throw EmbeddedClusterError.homeNotWritable(path, "chown: " + String(cString: strerror(errno)))
        }
    }
}
