import FakeParse
import Foundation
import HTTPServiceSupport

/// Where the fake services of a run listen and how to use them: the endpoints file that `harness serve`
/// writes and a run gives its backends, and the same facts as `HARNESS_…` variables.
public struct Endpoints: Encodable, Sendable {
    public struct APNs: Encodable, Sendable {
        public var url, caFile, teamId, keyId, keyFile, topic, controlURL: String
        /// The legacy binary gateway and the feedback service, `host:port`, when they listen.
        public var legacyGateway, feedback: String?
    }
    public struct Media: Encodable, Sendable {
        public var url, controlURL: String
        /// The Apache "combined" access log.
        public var accessLog: String?
    }
    public struct Parse: Encodable, Sendable {
        public var url, applicationId, masterKey: String
        public var clientKey, restAPIKey: String?
    }
    public var apns: APNs
    public var media: Media
    public var parse: Parse

    /// The endpoints of `stack`, Parse's being the backend's way there (the `backend-parse` link), with
    /// `topic` as the APNs topic to push to.
    public init(stack: ServiceStack, parse settings: FakeParseConfiguration, topic: String) {
        apns = APNs(
            url: stack.apns.url, caFile: stack.apns.caFile.path, teamId: stack.apns.signingKey.teamId,
            keyId: stack.apns.signingKey.keyId, keyFile: stack.apns.keyFile.path, topic: topic,
            controlURL: stack.apns.controlURL,
            legacyGateway: stack.apns.legacyPort.map { "\(stack.apns.configuration.host):\($0)" },
            feedback: stack.apns.feedbackPort.map { "\(stack.apns.configuration.host):\($0)" })
        media = Media(
            url: stack.media.url, controlURL: stack.media.controlURL,
            accessLog: stack.media.configuration.accessLog?.path)
        parse = Parse(
            url: stack.routes.backendParse, applicationId: settings.applicationId, masterKey: settings.masterKey,
            clientKey: settings.clientKey, restAPIKey: settings.restAPIKey)
    }

    /// Writes the file `0600`: it holds Parse's master key (docs/limits.md, Files). A file already at
    /// `url` is replaced whole, never written through a link left at its name.
    public func write(to url: URL) throws {
        try PrivateFile.write(try json(), to: url)
    }

    public func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    /// Every value of the file as a variable: `HARNESS_` and its path in capitals, words split by `_`
    /// (`apns.caFile` is `HARNESS_APNS_CA_FILE`, `parse.restAPIKey` `HARNESS_PARSE_REST_API_KEY`).
    /// Values the file leaves out are not set.
    public var environment: [String: String] {
        guard let data = try? json(), let sections = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return [:] }
        var variables: [String: String] = [:]
        for (section, values) in sections {
            guard let values = values as? [String: Any] else { continue }
            for (key, value) in values {
                guard let text = value as? String else { continue }
                variables["HARNESS_\(section.uppercased())_\(Self.capitals(key))"] = text
            }
        }
        return variables
    }

    /// `caFile` → `CA_FILE`, `controlURL` → `CONTROL_URL`, `restAPIKey` → `REST_API_KEY`.
    static func capitals(_ key: String) -> String {
        let characters = Array(key)
        var result = ""
        for (index, character) in characters.enumerated() {
            if index > 0, character.isUppercase {
                let previous = characters[index - 1]
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && next?.isLowercase == true) {
                    result += "_"
                }
            }
            result += character.uppercased()
        }
        return result
    }
}
