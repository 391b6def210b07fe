import Crypto
import CryptoExtras
import Foundation

/// A PKCS #12 file (`.p12`, RFC 7292) holding a push certificate and its private key, as Keychain Access
/// exports them for the PushChat tutorial's `openssl pkcs12 -nocerts … -in PushChatKey.p12`. The key is
/// encrypted with PBES2 (PBKDF2-HMAC-SHA256, AES-256-CBC), the certificate is in the clear, and the
/// whole is protected by an HMAC-SHA256 whose key comes from PKCS #12's own derivation: what OpenSSL 3
/// writes by default, and what OpenSSL, BoringSSL and Keychain read.
enum PKCS12Archive {
    static let iterations = 2048

    /// The archive's DER bytes. `salt` and `iv` are random unless given (tests give them).
    static func make(
        certificateDER: [UInt8], privateKeyPKCS8: [UInt8], passphrase: String,
        keySalt: [UInt8] = random(16), iv: [UInt8] = random(16), macSalt: [UInt8] = random(16)
    ) throws -> [UInt8] {
        let localKeyId = Array(SHA256.hash(data: certificateDER))
        let attributes = DER.set([DER.sequence([DER.oid(OID.localKeyId), DER.set([DER.octetString(localKeyId)])])])

        // The key, shrouded: PBES2 with PBKDF2-HMAC-SHA256 and AES-256-CBC, the passphrase as UTF-8.
        // OpenSSL's 2,048 rounds, below what swift-crypto allows for stored passwords: the archive holds a
        // test certificate, and is read by tools that expect the usual count.
        let key = try KDF.Insecure.PBKDF2.deriveKey(
            from: Array(passphrase.utf8), salt: keySalt, using: .sha256, outputByteCount: 32,
            unsafeUncheckedRounds: iterations)
        let encryptedKey = try AES._CBC.encrypt(privateKeyPKCS8, using: key, iv: try AES._CBC.IV(ivBytes: iv))
        let pbes2 = DER.sequence([
            DER.oid(OID.pbes2),
            DER.sequence([
                DER.sequence([
                    DER.oid(OID.pbkdf2),
                    DER.sequence([
                        DER.octetString(keySalt), DER.integer(iterations),
                        DER.sequence([DER.oid(OID.hmacWithSHA256), DER.null]),
                    ]),
                ]),
                DER.sequence([DER.oid(OID.aes256CBC), DER.octetString(iv)]),
            ]),
        ])
        let keyBag = DER.sequence([
            DER.oid(OID.pkcs8ShroudedKeyBag),
            DER.explicit(0, DER.sequence([pbes2, DER.octetString(Array(encryptedKey))])), attributes,
        ])
        let certificateBag = DER.sequence([
            DER.oid(OID.certBag),
            DER.explicit(
                0, DER.sequence([DER.oid(OID.x509Certificate), DER.explicit(0, DER.octetString(certificateDER))])),
            attributes,
        ])
        func data(_ content: [UInt8]) -> [UInt8] {
            DER.sequence([DER.oid(OID.data), DER.explicit(0, DER.octetString(content))])
        }
        let authenticatedSafe = DER.sequence([data(DER.sequence([certificateBag])), data(DER.sequence([keyBag]))])

        // The MAC over the authenticated safe, its key from PKCS #12's derivation (ID 3) of the
        // passphrase as a BMPString with its terminating zero.
        let macKey = pkcs12Derive(
            id: 3, password: bmpString(passphrase), salt: macSalt, iterations: iterations, length: 32)
        let mac = HMAC<SHA256>.authenticationCode(for: authenticatedSafe, using: SymmetricKey(data: macKey))
        let macData = DER.sequence([
            DER.sequence([DER.sequence([DER.oid(OID.sha256), DER.null]), DER.octetString(Array(mac))]),
            DER.octetString(macSalt), DER.integer(iterations),
        ])
        return DER.sequence([DER.integer(3), data(authenticatedSafe), macData])
    }

    static func random(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255) } }

    /// The passphrase as PKCS #12 hands it to its derivation: UTF-16 big-endian, then two zero bytes.
    static func bmpString(_ text: String) -> [UInt8] {
        text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } + [0, 0]
    }

    /// RFC 7292 appendix B.2 with SHA-256 (u = 32, v = 64 bytes).
    static func pkcs12Derive(id: UInt8, password: [UInt8], salt: [UInt8], iterations: Int, length: Int) -> [UInt8] {
        let v = 64
        func stretched(_ bytes: [UInt8]) -> [UInt8] {
            guard !bytes.isEmpty else { return [] }
            let count = v * ((bytes.count + v - 1) / v)
            return (0..<count).map { bytes[$0 % bytes.count] }
        }
        let diversifier = [UInt8](repeating: id, count: v)
        var input = stretched(salt) + stretched(password)
        var output: [UInt8] = []
        while output.count < length {
            var a = Array(SHA256.hash(data: diversifier + input))
            for _ in 1..<iterations { a = Array(SHA256.hash(data: a)) }
            output += a
            let b = stretched(a)
            // Each v-byte block of the input becomes block + b + 1, modulo 2^(8v).
            for start in stride(from: 0, to: input.count, by: v) {
                var carry = 1
                for index in stride(from: v - 1, through: 0, by: -1) {
                    let sum = Int(input[start + index]) + Int(b[index]) + carry
                    input[start + index] = UInt8(sum & 0xFF)
                    carry = sum >> 8
                }
            }
        }
        return Array(output.prefix(length))
    }

    enum OID {
        static let data = [1, 2, 840, 113_549, 1, 7, 1]
        static let pkcs8ShroudedKeyBag = [1, 2, 840, 113_549, 1, 12, 10, 1, 2]
        static let certBag = [1, 2, 840, 113_549, 1, 12, 10, 1, 3]
        static let x509Certificate = [1, 2, 840, 113_549, 1, 9, 22, 1]
        static let localKeyId = [1, 2, 840, 113_549, 1, 9, 21]
        static let pbes2 = [1, 2, 840, 113_549, 1, 5, 13]
        static let pbkdf2 = [1, 2, 840, 113_549, 1, 5, 12]
        static let hmacWithSHA256 = [1, 2, 840, 113_549, 2, 9]
        static let aes256CBC = [2, 16, 840, 1, 101, 3, 4, 1, 42]
        static let sha256 = [2, 16, 840, 1, 101, 3, 4, 2, 1]
    }

    /// The few DER encodings the archive needs.
    enum DER {
        static func element(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
            var length: [UInt8]
            if content.count < 0x80 {
                length = [UInt8(content.count)]
            } else {
                var count = content.count
                var bytes: [UInt8] = []
                while count > 0 {
                    bytes.insert(UInt8(count & 0xFF), at: 0)
                    count >>= 8
                }
                length = [0x80 | UInt8(bytes.count)] + bytes
            }
            return [tag] + length + content
        }

        static func sequence(_ items: [[UInt8]]) -> [UInt8] { element(0x30, items.flatMap { $0 }) }
        static func set(_ items: [[UInt8]]) -> [UInt8] { element(0x31, items.flatMap { $0 }) }
        static func octetString(_ bytes: [UInt8]) -> [UInt8] { element(0x04, bytes) }
        static let null: [UInt8] = [0x05, 0x00]
        static func explicit(_ number: UInt8, _ content: [UInt8]) -> [UInt8] { element(0xA0 | number, content) }

        static func integer(_ value: Int) -> [UInt8] {
            var bytes: [UInt8] = []
            var rest = value
            repeat {
                bytes.insert(UInt8(rest & 0xFF), at: 0)
                rest >>= 8
            } while rest > 0
            if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
            return element(0x02, bytes)
        }

        static func oid(_ arcs: [Int]) -> [UInt8] {
            var bytes = [UInt8(arcs[0] * 40 + arcs[1])]
            for arc in arcs.dropFirst(2) {
                var chunk = [UInt8(arc & 0x7F)]
                var rest = arc >> 7
                while rest > 0 {
                    chunk.insert(UInt8(rest & 0x7F) | 0x80, at: 0)
                    rest >>= 7
                }
                bytes += chunk
            }
            return element(0x06, bytes)
        }
    }
}
