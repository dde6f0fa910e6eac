import CSpawn
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a program to completion with `posix_spawn` and `waitpid`.
///
/// Foundation's `Process` waits on a descriptor its children inherit, so it never sees
/// `pg_ctl start` finish while the server it started keeps that descriptor open. Here the
/// child gets stdin from /dev/null, stdout and stderr into a file, and no other descriptor.
enum ChildProcess {
    struct Outcome {
        let status: Int32
        let output: String
    }

    static func run(_ executable: String, _ arguments: [String], environment: [String: String], directory: String = "/") throws -> Outcome {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("herald-\(UUID().uuidString).out").path
        let outputDescriptor = open(outputPath, O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0o600)
        guard outputDescriptor >= 0 else {
            throw ChildProcessError(message: "cannot create \(outputPath): \(String(cString: strerror(errno)))")
        }
        defer {
            close(outputDescriptor)
            unlink(outputPath)
        }

        var pid: pid_t = 0
        let argv = [executable] + arguments
        let envp = environment.map { "\($0.key)=\($0.value)" }
        let spawned = withCStringArray(argv) { argvPointer in
            withCStringArray(envp) { envpPointer in
                herald_spawn(&pid, executable, argvPointer, envpPointer, outputDescriptor, directory)
            }
        }
        guard spawned == 0 else {
            throw ChildProcessError(message: "cannot run \(executable): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else {
                throw ChildProcessError(message: "waiting for \(executable): \(String(cString: strerror(errno)))")
            }
        }
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        // WIFEXITED / WEXITSTATUS, which Swift does not import as macros.
        let exitCode = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Outcome(status: exitCode, output: output)
    }

    private static func withCStringArray<Result>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> Result) -> Result {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        pointers.append(nil)
        defer { for pointer in pointers { free(pointer) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}

struct ChildProcessError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
