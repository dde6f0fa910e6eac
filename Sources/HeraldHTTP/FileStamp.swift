#if canImport(Glibc)
    import Glibc
#endif

/// What identifies a file's contents cheaply: inode, size and modification time. A file
/// replaced (renamed over, as deployment tools do) or edited gets a new stamp.
public struct FileStamp: Sendable, Equatable {
    let inode: UInt64
    let size: Int64
    let modified: Int
    let modifiedNanoseconds: Int

    /// nil when the file cannot be looked at.
    public init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = Int(info.st_mtim.tv_sec)
        modifiedNanoseconds = Int(info.st_mtim.tv_nsec)
    }
}
