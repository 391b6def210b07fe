import Crypto
import NIOSSL
import Testing

@testable import FakeAPNs

/// The `.p12` the control API writes, read back by BoringSSL (NIOSSL's PKCS #12 reader): the issued
/// certificate and its key with the right passphrase, nothing with a wrong one. OpenSSL reads it in
/// LegacyGatewayServeTests, with the PushChat tutorial's own commands.
@Suite struct PKCS12ArchiveTests {
    @Test func boringSSLReadsTheCertificateAndKeyWithThePassphraseOnly() throws {
        let authority = try LocalCertificateAuthority()
        let issued = try authority.issuePushCertificateDER(bundleId: "com.razeware.PushChat", environments: ["sandbox"])
        let archive = try PKCS12Archive.make(
            certificateDER: issued.certificateDER, privateKeyPKCS8: issued.privateKeyPKCS8, passphrase: "pushchat")
        let bundle = try NIOSSLPKCS12Bundle(buffer: archive, passphrase: Array("pushchat".utf8))
        #expect(try bundle.certificateChain.map { try $0.toDERBytes() } == [issued.certificateDER])
        let key = try P256.Signing.PrivateKey(derRepresentation: issued.privateKeyPKCS8)
        let pem = Array(key.pemRepresentation.utf8)
        #expect(bundle.privateKey == (try NIOSSLPrivateKey(bytes: pem, format: .pem)))
        #expect(throws: (any Error).self) {
            _ = try NIOSSLPKCS12Bundle(buffer: archive, passphrase: Array("not-it".utf8))
        }
    }
}
