import FakeAPNs
import Foundation

/// Feeds arbitrary bytes to FakeAPNs's request validator, token verifier and certificate reader: none
/// may crash, whatever a provider sends.
enum ProviderRequestTarget {
    static let key = ProviderSigningKey(teamId: "TEAM123456", keyId: "KEY1234567")
    static let verifier: ProviderTokenVerifier = {
        var verifier = ProviderTokenVerifier()
        verifier.register(key)
        return verifier
    }()
    static let validator = ProviderRequestValidator { token in
        token.count == 64 ? DeviceRecord(topic: "com.example.app", environment: "sandbox") : nil
    }

    /// Header lines `name: value` up to an empty line, then the body.
    static func request(from bytes: [UInt8]) -> ProviderRequest {
        let text = String(decoding: bytes, as: UTF8.self)
        let parts = text.split(separator: "\n\n", maxSplits: 1, omittingEmptySubsequences: false)
        var headers: [(name: String, value: String)] = []
        for line in (parts.first ?? "").split(separator: "\n") {
            let field = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = field.first else { continue }
            let value = field.count > 1 ? String(field[1]).trimmingCharacters(in: .whitespaces) : ""
            headers.append((name: String(name).lowercased(), value: value))
        }
        // Pseudo-headers are written ":method: POST"; the split above leaves the name empty for them.
        headers = headers.map { $0.name.isEmpty ? Self.pseudo($0.value) : $0 }
        let body = parts.count > 1 ? Data(parts[1].utf8) : Data()
        return ProviderRequest(headers: headers, body: body)
    }

    private static func pseudo(_ text: String) -> (name: String, value: String) {
        let field = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let value = field.count > 1 ? String(field[1]).trimmingCharacters(in: .whitespaces) : ""
        return (name: ":" + String(field.first ?? ""), value: value)
    }

    static func run(_ bytes: [UInt8]) {
        var connection = ProviderConnectionState()
        let request = request(from: bytes)
        for environment in ["sandbox", "production"] {
            _ = validator.validate(request, environment: environment) { token in
                if case .failure(let reason) = connection.authenticate(
                    token, environment: environment, verifier: verifier)
                {
                    return reason
                }
                return nil
            }
        }
        _ = verifier.verify(String(decoding: bytes, as: UTF8.self))
        _ = ProviderCertificate(derEncoded: bytes)
    }
}
