import Crypto
import Foundation
import SwiftASN1
import X509

/// What a provider's TLS client certificate allows, read the way APNs reads Apple's push
/// certificates: the bundle id in the subject's `UID`, which covers the app, its `.voip` and its
/// `.complication` topics, and the environments named by Apple's extensions
/// (1.2.840.113635.100.6.3.1 development, …3.2 production).
public struct ProviderCertificate: Sendable, Equatable {
    public var bundleId: String
    public var environments: Set<String>

    static let userIdOID: ASN1ObjectIdentifier = [0, 9, 2342, 19_200_300, 100, 1, 1]
    static let developmentOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 3, 1]
    static let productionOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 3, 2]

    /// The topics the certificate may push to.
    public var topics: Set<String> { [bundleId, bundleId + ".voip", bundleId + ".complication"] }

    /// Reads a DER certificate; nil when it is not a push certificate (no `UID`, no environment).
    public init?(derEncoded bytes: [UInt8]) {
        guard let certificate = try? Certificate(derEncoded: bytes) else { return nil }
        let uid = certificate.subject.flatMap { $0 }.first { $0.type == Self.userIdOID }.flatMap { String($0.value) }
        var environments: Set<String> = []
        if certificate.extensions[oid: Self.developmentOID] != nil { environments.insert("sandbox") }
        if certificate.extensions[oid: Self.productionOID] != nil { environments.insert("production") }
        guard let uid, !uid.isEmpty, !environments.isEmpty else { return nil }
        self.bundleId = uid
        self.environments = environments
    }

    public init(bundleId: String, environments: Set<String>) {
        self.bundleId = bundleId
        self.environments = environments
    }
}

extension LocalCertificateAuthority {
    /// Issues a push certificate for `bundleId`, as the developer portal would, valid in the given
    /// environments (`sandbox`, `production` or both: a "universal" certificate).
    public func issuePushCertificate(bundleId: String, environments: Set<String>) throws -> (
        certificatePEM: String, privateKeyPEM: String
    ) {
        let issued = try issuePushCertificateDER(bundleId: bundleId, environments: environments)
        return (
            try Certificate(derEncoded: issued.certificateDER).serializeAsPEM().pemString,
            try P256.Signing.PrivateKey(derRepresentation: issued.privateKeyPKCS8).pemRepresentation
        )
    }

    /// The same, as DER: the certificate (Apple's `.cer`) and the key as PKCS #8.
    func issuePushCertificateDER(bundleId: String, environments: Set<String>) throws -> (
        certificateDER: [UInt8], privateKeyPKCS8: [UInt8]
    ) {
        let key = P256.Signing.PrivateKey()
        let now = Date()
        let subject = DistinguishedName([
            RelativeDistinguishedName([
                RelativeDistinguishedName.Attribute(type: ProviderCertificate.userIdOID, utf8String: bundleId)
            ]),
            RelativeDistinguishedName([
                RelativeDistinguishedName.Attribute(
                    type: .RDNAttributeType.commonName, utf8String: "Apple Push Services: \(bundleId)")
            ]),
            RelativeDistinguishedName([
                RelativeDistinguishedName.Attribute(type: .RDNAttributeType.organizationName, utf8String: "PushHarness")
            ]),
        ])
        var extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([.clientAuth])
        }
        // ASN.1 NULL, as Apple's marker extensions carry.
        if environments.contains("sandbox") {
            try extensions.append(.init(oid: ProviderCertificate.developmentOID, critical: false, value: [0x05, 0x00]))
        }
        if environments.contains("production") {
            try extensions.append(.init(oid: ProviderCertificate.productionOID, critical: false, value: [0x05, 0x00]))
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(30 * 86400),
            issuer: self.certificate.subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions, issuerPrivateKey: .init(privateKey))
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return (serializer.serializedBytes, Array(key.derRepresentation))
    }
}
