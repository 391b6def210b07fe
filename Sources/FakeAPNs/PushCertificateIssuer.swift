import Crypto
import Foundation
import HTTPServiceSupport
import X509

/// Issues providers' push certificates from FakeAPNs's CA and writes them where a client can load them.
public struct PushCertificateIssuer: Sendable {
    let authority: LocalCertificateAuthority
    let directory: URL

    public struct Issued: Codable, Sendable {
        /// The certificate, PEM.
        public var certificateFile: String
        /// Its private key, PKCS#8 PEM.
        public var keyFile: String
        /// Certificate and key in one PEM file, the form aioapns and curl's `--cert` take.
        public var combinedFile: String
        /// The certificate as DER, as the developer portal hands it out (`aps_development.cer`).
        public var cerFile: String
        /// Certificate and key in a PKCS #12 file, as Keychain Access exports them, protected by the
        /// passphrase asked for.
        public var p12File: String
    }

    /// The `.p12` passphrase when none is asked for.
    public static let defaultPassphrase = "pushharness"

    /// What is wrong with `bundleId` as Apple takes bundle ids (letters, digits, `-` and `.`, at most
    /// 155 characters); nil when it can be used. It also names the issued files, so nothing else may pass.
    public static func problem(bundleId: String) -> String? {
        let allowed = bundleId.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: ".")
        }
        guard !bundleId.isEmpty, bundleId.utf8.count <= 155, allowed, !bundleId.hasPrefix(".") else {
            return
                "bundleId must be 1 to 155 letters, digits, '-' and '.' (not starting with '.'), as Apple's bundle ids are"
        }
        return nil
    }

    /// - Throws: ``CertificateRequestError`` when `bundleId` is not a bundle id.
    public func issue(bundleId: String, environments: Set<String>, passphrase: String = defaultPassphrase) throws
        -> Issued
    {
        if let problem = Self.problem(bundleId: bundleId) { throw CertificateRequestError.badBundleId(problem) }
        guard passphrase.utf16.count <= 256 else {
            throw CertificateRequestError.passphraseTooLong
        }
        let der = try authority.issuePushCertificateDER(bundleId: bundleId, environments: environments)
        let certificate = try Certificate(derEncoded: der.certificateDER).serializeAsPEM().pemString
        let key = try P256.Signing.PrivateKey(derRepresentation: der.privateKeyPKCS8).pemRepresentation
        let name = "push-\(bundleId)-\(environments.sorted().joined(separator: "+"))"
        let certificateFile = directory.appendingPathComponent(name + ".pem")
        let keyFile = directory.appendingPathComponent(name + ".key")
        let combinedFile = directory.appendingPathComponent(name + ".combined.pem")
        try certificate.write(to: certificateFile, atomically: true, encoding: .utf8)
        try PrivateFile.write(key, to: keyFile)
        try PrivateFile.write(certificate + "\n" + key, to: combinedFile)
        let cerFile = directory.appendingPathComponent(name + ".cer")
        try Data(der.certificateDER).write(to: cerFile)
        let p12File = directory.appendingPathComponent(name + ".p12")
        let archive = try PKCS12Archive.make(
            certificateDER: der.certificateDER, privateKeyPKCS8: der.privateKeyPKCS8, passphrase: passphrase)
        try PrivateFile.write(Data(archive), to: p12File)
        return Issued(
            certificateFile: certificateFile.path, keyFile: keyFile.path, combinedFile: combinedFile.path,
            cerFile: cerFile.path, p12File: p12File.path)
    }
}

/// A certificate request that cannot be issued.
public enum CertificateRequestError: Error, Equatable, CustomStringConvertible {
    /// The bundle id is not one: what is wrong with it.
    case badBundleId(String)
    /// `p12Passphrase` is longer than 256 characters.
    case passphraseTooLong

    public var description: String {
        switch self {
        case .badBundleId(let problem): problem
        case .passphraseTooLong: "p12Passphrase must be at most 256 characters"
        }
    }
}
