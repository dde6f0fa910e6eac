import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An exclusive `flock` on a file, held until `release()` (or the process ends).
final class FileLock: Sendable {
    private let descriptor: Int32

    /// Blocks until the lock is held; `nil` when the file cannot be opened (see `errno`).
    init?(path: String) {
        let descriptor = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        while flock(descriptor, LOCK_EX) != 0 {
            if errno != EINTR {
                close(descriptor)
                return nil
            }
        }
        self.descriptor = descriptor
    }

    func release() {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}

/// `mkdir -p` with `mode` for the folders it creates; throws the failing folder and errno.
func makeDirectories(_ path: String, mode: mode_t) throws {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue { return }
    let parent = (path as NSString).deletingLastPathComponent
    if !parent.isEmpty, parent != path { try makeDirectories(parent, mode: mode) }
    if mkdir(path, mode) != 0, errno != EEXIST {
        throw EmbeddedClusterError.homeNotWritable(path, String(cString: strerror(errno)))
    }
    chmod(path, mode)  // mkdir's mode passes through the umask
}
