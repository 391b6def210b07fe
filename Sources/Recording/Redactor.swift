import Foundation

/// Keeps secrets out of a cassette: header values that are credentials by name, and every occurrence of
/// a configured secret's value anywhere in a URL, a header or a text body, replaced by a marker that
/// says what was removed: `[redacted: Parse master key]`.
public struct Redactor: Sendable {
    /// A secret's value and what to call it in the marker.
    public struct Secret: Sendable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Headers that carry credentials whatever their value: the APNs provider token, Parse's keys,
    /// cookies and basic auth.
    public static let credentialHeaders: [String: String] = [
        "authorization": "authorization",
        "proxy-authorization": "proxy authorization",
        "cookie": "cookie",
        "set-cookie": "cookie",
        "x-parse-master-key": "Parse master key",
        "x-parse-rest-api-key": "Parse REST API key",
        "x-parse-client-key": "Parse client key",
        "x-parse-javascript-key": "Parse JavaScript key",
        "x-parse-session-token": "Parse session token",
    ]

    public private(set) var secrets: [Secret]

    /// Secrets shorter than this are not searched for: a two-letter "key" would redact half the file.
    public static let shortestSecret = 6

    public init(secrets: [Secret] = []) {
        // Each also as a URL would carry it, percent-encoded; longest first, so a secret that contains
        // another is replaced whole.
        var all: [Secret] = []
        for secret in secrets where secret.value.utf8.count >= Self.shortestSecret {
            if !all.contains(where: { $0.value == secret.value }) { all.append(secret) }
            if let encoded = secret.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics),
                encoded != secret.value, !all.contains(where: { $0.value == encoded })
            {
                all.append(Secret(name: secret.name, value: encoded))
            }
        }
        self.secrets = all.sorted { $0.value.utf8.count > $1.value.utf8.count }
    }

    public static func marker(_ name: String) -> String { "[redacted: \(name)]" }

    /// `text` with every secret's value replaced by its marker.
    public func redact(_ text: String) -> String {
        var text = text
        for secret in secrets where text.contains(secret.value) {
            text = text.replacingOccurrences(of: secret.value, with: Self.marker(secret.name))
        }
        return text
    }

    public func redact(_ headers: [HAR.Header]) -> [HAR.Header] {
        headers.map { header in
            if let name = Self.credentialHeaders[header.name.lowercased()] {
                return HAR.Header(name: header.name, value: Self.marker(name))
            }
            return HAR.Header(name: header.name, value: redact(header.value))
        }
    }

    /// Whether any secret's value occurs in `bytes`: for bodies too large to rewrite.
    public func findsSecret(in bytes: Data) -> String? {
        secrets.first { bytes.range(of: Data($0.value.utf8)) != nil }?.name
    }
}
