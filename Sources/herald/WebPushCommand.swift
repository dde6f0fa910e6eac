import ArgumentParser
import Foundation
import HeraldPush

/// `herald webpush`: the application server's Web Push key (docs/apps.md#web-push-browsers-and-installed-web-apps).
struct WebPushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webpush", abstract: "Make the key Herald signs Web Push with (VAPID).", subcommands: [Keys.self])

    struct Keys: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a new P-256 private key (PEM, mode 0600) and print its public key.",
            discussion: """
                Point HERALD_WEBPUSH_KEY_FILE at the file and set HERALD_WEBPUSH_SUBJECT (mailto: or https:) on every \
                worker and server. Pages subscribe with the public key printed here (GET /v1/webpush/key answers it too). \
                A new key invalidates every subscription made with the old one: browsers must subscribe again.
                """)

        @Option(help: "Where to write the private key; an existing file is never overwritten.") var out: String
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let (pem, publicKey) = VAPIDCredentials.newKey()
            // Created here, and only here, with the mode set at creation: no moment where the key is readable by others.
            let descriptor = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                let reason = errno == EEXIST ? "it exists (a new key would orphan every browser's subscription)" : String(cString: strerror(errno))
                throw UserFacingMessage("cannot write \(out): \(reason)")
            }
            let bytes = Array(pem.utf8)
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            let closed = close(descriptor)
            guard written == bytes.count, closed == 0 else {
                unlink(out)
                throw UserFacingMessage("cannot write \(out): \(String(cString: strerror(errno)))")
            }
            if options.json {
                try printJSON(["publicKey": publicKey, "keyFile": out])
            } else {
                print("wrote \(out) (mode 0600); public key (applicationServerKey):")
                print(publicKey)
            }
        }
    }
}
