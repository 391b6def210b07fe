import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOSSL
import ParseModel

/// Parse's push adapter: sends each notification to APNs over HTTP/2 and TLS with a provider token
/// (ES256 JWT), refreshed every 50 minutes as Apple asks (not more often than every 20, not older than 60).
final class APNsProvider: Sendable {
    struct Outcome: Sendable {
        var status: Int
        var apnsId: String?
        var reason: String?
    }

    private let configuration: APNsProviderConfiguration
    private let client: HTTPClient
    private let key: P256.Signing.PrivateKey
    private let token = LockedToken()

    init(configuration: APNsProviderConfiguration) throws {
        self.configuration = configuration
        let pem: String
        do {
            pem = try String(contentsOfFile: configuration.keyFile, encoding: .utf8)
        } catch {
            throw ParseConfigurationError(
                "cannot read the APNs key file \(configuration.keyFile): \(error.localizedDescription)")
        }
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw ParseConfigurationError(
                "the APNs key file \(configuration.keyFile) is not a PKCS#8 P-256 key (.p8): \(error)")
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile = configuration.caFile { tls.additionalTrustRoots = [.file(caFile)] }
        var clientConfiguration = HTTPClient.Configuration(tlsConfiguration: tls)
        clientConfiguration.httpVersion = .automatic
        clientConfiguration.timeout = .init(connect: .seconds(5), read: .seconds(30))
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: clientConfiguration)
    }

    func send(_ notification: ApplePush) async throws -> Outcome {
        // The token is the client's text: escaped, so that it can only ever be one path segment.
        var segment = CharacterSet.urlPathAllowed
        segment.remove(charactersIn: "/?#%;")
        let token = notification.deviceToken.addingPercentEncoding(withAllowedCharacters: segment) ?? ""
        var request = HTTPClientRequest(url: configuration.url + "/3/device/" + token)
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer " + (try providerToken()))
        // An installation without an appIdentifier sends no topic; APNs answers for it (MissingTopic).
        if !notification.topic.isEmpty { request.headers.add(name: "apns-topic", value: notification.topic) }
        request.headers.add(name: "apns-push-type", value: notification.pushType)
        request.headers.add(name: "apns-priority", value: notification.priority)
        if let expiration = notification.expiration {
            request.headers.add(name: "apns-expiration", value: "\(expiration)")
        }
        if let collapseId = notification.collapseId { request.headers.add(name: "apns-collapse-id", value: collapseId) }
        request.body = .bytes(ByteBuffer(string: ParseJSON.text(notification.payload)))
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 64 * 1024)
        let reason = (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any])?[
            "reason"]
        return Outcome(
            status: Int(response.status.code), apnsId: response.headers.first(name: "apns-id"),
            reason: reason as? String)
    }

    func shutdown() async {
        try? await client.shutdown()
    }

    private func providerToken() throws -> String {
        try token.current(maximumAge: 50 * 60) {
            let header = #"{"alg":"ES256","kid":"\#(configuration.keyId)"}"#
            let claims = #"{"iss":"\#(configuration.teamId)","iat":\#(Int(Date().timeIntervalSince1970))}"#
            let signingInput = Self.base64URL(Data(header.utf8)) + "." + Self.base64URL(Data(claims.utf8))
            let signature = try key.signature(for: Data(signingInput.utf8))
            return signingInput + "." + Self.base64URL(signature.rawRepresentation)
        }
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// The cached provider token and when it was made.
private final class LockedToken: @unchecked Sendable {
    private let lock = NSLock()
    private var value: (token: String, made: Date)?

    func current(maximumAge: TimeInterval, make: () throws -> String) rethrows -> String {
        lock.lock()
        defer { lock.unlock() }
        if let value, Date().timeIntervalSince(value.made) < maximumAge { return value.token }
        let token = try make()
        value = (token, Date())
        return token
    }
}

/// FakeParse cannot start as configured.
public struct ParseConfigurationError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
