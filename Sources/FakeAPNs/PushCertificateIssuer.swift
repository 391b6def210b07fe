import Foundation

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
    }

    public func issue(bundleId: String, environments: Set<String>) throws -> Issued {
        let (certificate, key) = try authority.issuePushCertificate(bundleId: bundleId, environments: environments)
        let name = "push-\(bundleId)-\(environments.sorted().joined(separator: "+"))"
        let certificateFile = directory.appendingPathComponent(name + ".pem")
        let keyFile = directory.appendingPathComponent(name + ".key")
        let combinedFile = directory.appendingPathComponent(name + ".combined.pem")
        try certificate.write(to: certificateFile, atomically: true, encoding: .utf8)
        try key.write(to: keyFile, atomically: true, encoding: .utf8)
        try (certificate + "\n" + key).write(to: combinedFile, atomically: true, encoding: .utf8)
        return Issued(certificateFile: certificateFile.path, keyFile: keyFile.path, combinedFile: combinedFile.path)
    }
}
