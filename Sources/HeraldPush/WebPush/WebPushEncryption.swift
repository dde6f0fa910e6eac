import Crypto
import Foundation
import HeraldCore

/// RFC 8291 message encryption for Web Push, in RFC 8188's `aes128gcm` coding: each message
/// gets a fresh ephemeral P-256 key and a random salt, so no two bodies share a key or nonce.
/// The body is one record: the header (salt, record size, the ephemeral public key) and the
/// plaintext, its delimiter and the GCM tag.
public enum WebPushEncryption {
    /// What a push service takes at most (RFC 8030 requires 4,096 octets of it).
    public static let maxBody = 4_096
    /// Header (86) and tag (16) and the last record's delimiter (1).
    public static let overhead = 86 + 16 + 1
    /// The longest plaintext one body carries.
    public static let maxPlaintext = maxBody - overhead

    /// Why a body could not be made or read.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// The encrypted body for `plaintext` to the browser holding `subscription`'s keys.
    /// - Parameters:
    ///   - ephemeral, salt: fixed only by tests of the RFC's example; fresh otherwise.
    /// - Throws: `Failure` when the plaintext is too long or the browser's key is no P-256 point.
    public static func encrypt(
        _ plaintext: some Collection<UInt8>, to subscription: WebPushSubscription, ephemeral: P256.KeyAgreement.PrivateKey = .init(),
        salt: [UInt8]? = nil
    ) throws(Failure) -> [UInt8] {
        guard plaintext.count <= maxPlaintext else {
            throw Failure("the push is \(plaintext.count) bytes; Web Push carries at most \(maxPlaintext) before encryption")
        }
        let browser: P256.KeyAgreement.PublicKey
        do {
            browser = try P256.KeyAgreement.PublicKey(x963Representation: subscription.p256dh)
        } catch {
            throw Failure("the subscription's p256dh is not a point on P-256")
        }
        let salt = salt ?? (0..<16).map { _ in UInt8.random(in: .min ... .max) }
        let senderPublic = Array(ephemeral.publicKey.x963Representation)
        let keys: (key: SymmetricKey, nonce: [UInt8])
        do {
            let shared = try ephemeral.sharedSecretFromKeyAgreement(with: browser)
            keys = derive(shared: shared, auth: subscription.auth, browserPublic: subscription.p256dh, senderPublic: senderPublic, salt: salt)
        } catch {
            throw Failure("no shared secret with the subscription's key: \(error)")
        }
        var padded = Array(plaintext)
        padded.append(0x02)  // the last (and only) record
        let sealed: AES.GCM.SealedBox
        do {
            sealed = try AES.GCM.seal(padded, using: keys.key, nonce: try AES.GCM.Nonce(data: keys.nonce))
        } catch {
            throw Failure("AES-GCM failed: \(error)")
        }
        var body = salt
        body.reserveCapacity(overhead + plaintext.count)
        let recordSize = UInt32(maxBody)
        body += [UInt8(recordSize >> 24), UInt8(recordSize >> 16 & 0xff), UInt8(recordSize >> 8 & 0xff), UInt8(recordSize & 0xff)]
        body.append(UInt8(senderPublic.count))
        body += senderPublic
        body += sealed.ciphertext
        body += sealed.tag
        return body
    }

    /// The plaintext of a body made for the browser whose private key is `browser` (the
    /// emulator's push service reads with it, as a browser would).
    public static func decrypt(_ body: [UInt8], browser: P256.KeyAgreement.PrivateKey, auth: [UInt8]) throws(Failure) -> [UInt8] {
        guard body.count >= 21 else { throw Failure("the body is shorter than an aes128gcm header") }
        let salt = Array(body[0..<16])
        let recordSize = body[16..<20].reduce(0) { $0 << 8 | Int($1) }
        let idLength = Int(body[20])
        guard body.count >= 21 + idLength + 17 else { throw Failure("the body is shorter than its header says") }
        guard body.count - 21 - idLength <= recordSize else { throw Failure("the body holds more than one record") }
        let senderPublic = Array(body[21..<(21 + idLength)])
        let record = body[(21 + idLength)...]
        let sender: P256.KeyAgreement.PublicKey
        do {
            sender = try P256.KeyAgreement.PublicKey(x963Representation: senderPublic)
        } catch {
            throw Failure("the header's key id is not a P-256 public key")
        }
        let padded: [UInt8]
        do {
            let shared = try browser.sharedSecretFromKeyAgreement(with: sender)
            let keys = derive(
                shared: shared, auth: auth, browserPublic: Array(browser.publicKey.x963Representation), senderPublic: senderPublic, salt: salt)
            let box = try AES.GCM.SealedBox(nonce: try AES.GCM.Nonce(data: keys.nonce), ciphertext: record.dropLast(16), tag: record.suffix(16))
            padded = Array(try AES.GCM.open(box, using: keys.key))
        } catch {
            throw Failure("the body does not decrypt with this subscription's keys")
        }
        guard let delimiter = padded.lastIndex(where: { $0 != 0 }), padded[delimiter] == 0x02 else {
            throw Failure("the record does not end with the last record's delimiter (2)")
        }
        return Array(padded[..<delimiter])
    }

    /// RFC 8291 §3.3–3.4 and RFC 8188 §2.2: the content key and nonce.
    private static func derive(shared: SharedSecret, auth: [UInt8], browserPublic: [UInt8], senderPublic: [UInt8], salt: [UInt8]) -> (
        key: SymmetricKey, nonce: [UInt8]
    ) {
        let keyInfo = Array("WebPush: info".utf8) + [0] + browserPublic + senderPublic
        let ikm = shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: auth, sharedInfo: keyInfo, outputByteCount: 32)
        let prk = HKDF<SHA256>.extract(inputKeyMaterial: ikm, salt: salt)
        let key = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Array("Content-Encoding: aes128gcm".utf8) + [0], outputByteCount: 16)
        let nonce = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Array("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
        return (key, nonce.withUnsafeBytes { Array($0) })
    }
}
