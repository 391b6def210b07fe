import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// A certificate authority made at start-up, so that nothing that can expire is ever committed, and the
/// server certificate it issues for the names clients use to reach APNs.
public struct LocalCertificateAuthority: Sendable {
    public let certificate: Certificate
    let privateKey: P256.Signing.PrivateKey

    /// The names on the server certificate: Apple's three hosts and the loopback names.
    public static let serverNames = [
        "api.push.apple.com", "api.sandbox.push.apple.com", "api.development.push.apple.com", "localhost",
    ]

    public init(commonName: String = "PushHarness Local CA") throws {
        privateKey = P256.Signing.PrivateKey()
        let name = try DistinguishedName {
            OrganizationName("PushHarness")
            CommonName(commonName)
        }
        let now = Date()
        certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(privateKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(30 * 86400),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(privateKey))
    }

    public var pem: String {
        get throws { try certificate.serializeAsPEM().pemString }
    }

    /// Issues a server certificate for ``serverNames`` and 127.0.0.1, with a new key.
    func issueServerCertificate() throws -> (certificate: Certificate, key: P256.Signing.PrivateKey) {
        let key = P256.Signing.PrivateKey()
        let now = Date()
        let subject = try DistinguishedName {
            OrganizationName("PushHarness")
            CommonName("api.development.push.apple.com")
        }
        var names: [GeneralName] = Self.serverNames.map { .dnsName($0) }
        names.append(.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])))
        let sans = names
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(30 * 86400),
            issuer: self.certificate.subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(sans)
            },
            issuerPrivateKey: .init(privateKey))
        return (certificate, key)
    }

    /// A TLS server context presenting a freshly issued certificate and offering ALPN `h2`. Like APNs,
    /// it asks for a client certificate, accepts connections without one (token auth), and verifies one
    /// that is presented against the CA that issues push certificates.
    func makeServerTLSContext() throws -> NIOSSLContext {
        try makeServerTLSContext(clientCertificate: .optionalVerification, applicationProtocols: ["h2"])
    }

    /// The legacy gateway's and feedback service's TLS: no ALPN, and a client certificate from this CA
    /// required in the handshake, as Apple required a push certificate on ports 2195 and 2196.
    func makeLegacyServerTLSContext() throws -> NIOSSLContext {
        try makeServerTLSContext(clientCertificate: .noHostnameVerification, applicationProtocols: [])
    }

    private func makeServerTLSContext(
        clientCertificate: CertificateVerification, applicationProtocols: [String]
    ) throws -> NIOSSLContext {
        let (certificate, key) = try issueServerCertificate()
        let chain = try NIOSSLCertificate(bytes: Array(certificate.serializeAsPEM().pemString.utf8), format: .pem)
        let privateKey = try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(chain)], privateKey: .privateKey(privateKey))
        configuration.applicationProtocols = applicationProtocols
        configuration.minimumTLSVersion = .tlsv12
        configuration.certificateVerification = clientCertificate
        configuration.trustRoots = .certificates([
            try NIOSSLCertificate(bytes: Array(self.certificate.serializeAsPEM().pemString.utf8), format: .pem)
        ])
        return try NIOSSLContext(configuration: configuration)
    }
}
