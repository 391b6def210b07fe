import Crypto
import Foundation
import Testing

@testable import FakeAPNs

@Suite struct ProviderRequestValidatorTests {
    let key = ProviderSigningKey(teamId: "TEAM123456", keyId: "KEY1234567")
    let token = String(repeating: "ab", count: 32)
    let topic = "com.razeware.NASA-TV"

    var verifier: ProviderTokenVerifier {
        var verifier = ProviderTokenVerifier()
        verifier.register(key)
        return verifier
    }

    func validator(unregisteredAt: Date? = nil) -> ProviderRequestValidator {
        let token = token
        let record = DeviceRecord(topic: topic, environment: "sandbox", unregisteredAt: unregisteredAt)
        return ProviderRequestValidator { $0 == token ? record : nil }
    }

    /// Validates on a new connection to a sandbox endpoint.
    func validate(_ request: ProviderRequest, environment: String = "sandbox", unregisteredAt: Date? = nil)
        -> Result<AcceptedNotification, APNsReason>
    {
        var connection = ProviderConnectionState()
        let verifier = verifier
        return validator(unregisteredAt: unregisteredAt).validate(request, environment: environment) { token in
            if case .failure(let reason) = connection.authenticate(token, environment: environment, verifier: verifier)
            {
                return reason
            }
            return nil
        }
    }

    func jwt(
        iat: Double = Date().timeIntervalSince1970, kid: String? = nil, iss: String? = nil, der: Bool = false,
        iatJSON: String? = nil
    ) -> String {
        let header = Data(#"{"alg":"ES256","kid":"\#(kid ?? key.keyId)"}"#.utf8)
        let claims = Data(#"{"iss":"\#(iss ?? key.teamId)","iat":\#(iatJSON ?? String(Int(iat)))}"#.utf8)
        let input = base64URL(header) + "." + base64URL(claims)
        let signature = try! key.privateKey.signature(for: Data(input.utf8))
        return input + "." + base64URL(der ? signature.derRepresentation : signature.rawRepresentation)
    }

    func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    func request(
        method: String = "POST", path: String? = nil, headers extra: [(String, String)] = [],
        authorization: String? = "default", body: String = #"{"aps":{"content-available":1}}"#,
        pushType: String? = "background", priority: String? = "5"
    ) -> ProviderRequest {
        var headers: [(name: String, value: String)] = [(":method", method), (":path", path ?? "/3/device/\(token)")]
        if let authorization {
            headers.append(("authorization", authorization == "default" ? "bearer \(jwt())" : authorization))
        }
        headers.append(("apns-topic", topic))
        if let pushType { headers.append(("apns-push-type", pushType)) }
        if let priority { headers.append(("apns-priority", priority)) }
        headers += extra.map { (name: $0.0, value: $0.1) }
        return ProviderRequest(headers: headers, body: Data(body.utf8))
    }

    func reason(_ request: ProviderRequest, environment: String = "sandbox") -> String? {
        if case .failure(let reason) = validate(request, environment: environment) { return reason.reason }
        return nil
    }

    @Test func aValidSilentPushIsAcceptedWithAGeneratedUppercaseId() throws {
        let accepted = try validate(request()).get()
        #expect(accepted.deviceToken == token)
        #expect(accepted.pushType == "background")
        #expect(accepted.priority == 5)
        #expect(accepted.apnsId == accepted.apnsId.uppercased())
        #expect(UUID(uuidString: accepted.apnsId) != nil)
    }

    @Test func aGivenApnsIdIsEchoedExactly() throws {
        let id = "3f2504e0-4f89-11d3-9a0c-0305e82c3301"
        #expect(try validate(request(headers: [("apns-id", id)])).get().apnsId == id)
    }

    @Test func methodIsCheckedBeforePath() {
        #expect(reason(request(method: "GET", path: "/")) == "MethodNotAllowed")
        #expect(reason(request(path: "/2/device/x")) == "BadPath")
        #expect(reason(request(path: "/3/device/")) == "MissingDeviceToken")
    }

    @Test func providerTokenRules() {
        #expect(reason(request(authorization: nil)) == "MissingProviderToken")
        #expect(reason(request(authorization: "bearer not.a.jwt")) == "InvalidProviderToken")
        #expect(reason(request(authorization: "bearer \(jwt(kid: "OTHERKEY00"))")) == "InvalidProviderToken")
        #expect(reason(request(authorization: "bearer \(jwt(iss: "OTHERTEAM0"))")) == "InvalidProviderToken")
        let twoHoursAgo = Date().timeIntervalSince1970 - 7200
        #expect(reason(request(authorization: "bearer \(jwt(iat: twoHoursAgo))")) == "ExpiredProviderToken")
        #expect(reason(request(authorization: "Bearer \(jwt(der: true))")) == nil)
    }

    @Test func deviceTokenAndTopicRules() {
        #expect(reason(request(path: "/3/device/xyz")) == "BadDeviceToken")
        #expect(reason(request(path: "/3/device/" + String(repeating: "cd", count: 32))) == "BadDeviceToken")
        let wrongTopic = ProviderRequest(
            headers: request().headers.map { $0.name == "apns-topic" ? (name: $0.name, value: "com.other.app") : $0 },
            body: request().body)
        #expect(reason(wrongTopic) == "DeviceTokenNotForTopic")
        let noTopic = ProviderRequest(
            headers: request().headers.filter { $0.name != "apns-topic" }, body: request().body)
        #expect(reason(noTopic) == "MissingTopic")
        #expect(reason(request(), environment: "production") == "BadDeviceToken")
        #expect(reason(request(path: "/3/device/" + token.uppercased())) == nil)
    }

    /// A topic against its device's, byte for byte once the push type's suffix is off.
    @Test(arguments: [
        ("com.example.app", 0, "com.example.app", true),
        ("com.example.app.voip", 5, "com.example.app", true),
        ("com.example.app.voip", 0, "com.example.app", false),
        ("com.example.ap", 0, "com.example.app", false),
        ("com.example.apq", 0, "com.example.app", false),
        ("com.example.app", 0, "com.example.ap", false),
        ("", 0, "", true),
        // The same text to Swift's ==, not the same bytes: composed and decomposed é.
        ("caf\u{E9}", 0, "cafe\u{301}", false),
    ])
    func topicBytesAreComparedAsTheyAre(topic: String, suffix: Int, device: String, equal: Bool) {
        #expect(topic.utf8Equals(device, droppingLast: suffix) == equal)
    }

    @Test func theTopicSuffixMustMatchThePushType() {
        let voipTopic = ProviderRequest(
            headers: request(pushType: "voip", priority: "10").headers.map {
                $0.name == "apns-topic" ? (name: $0.name, value: topic + ".voip") : $0
            }, body: request().body)
        #expect(reason(voipTopic) == nil)
        #expect(reason(request(pushType: "voip", priority: "10")) == "BadTopic")
    }

    @Test func anUnregisteredTokenGets410WithTheTimeInMilliseconds() throws {
        let removed = Date(timeIntervalSince1970: 1_700_000_000.123)
        guard case .failure(let reason) = validate(request(), unregisteredAt: removed) else {
            Issue.record("an unregistered token was accepted")
            return
        }
        #expect(reason.status == 410)
        #expect(reason.json == #"{"reason":"Unregistered","timestamp":1700000000123}"#)
    }

    @Test func headerRules() {
        #expect(reason(request(pushType: "carrier-pigeon")) == "InvalidPushType")
        #expect(reason(request(priority: "7")) == "BadPriority")
        #expect(reason(request(priority: "10")) == "BadPriority")
        #expect(reason(request(pushType: "alert", priority: "10")) == nil)
        #expect(reason(request(headers: [("apns-expiration", "tomorrow")])) == "BadExpirationDate")
        #expect(reason(request(headers: [("apns-id", "not-a-uuid")])) == "BadMessageId")
        #expect(reason(request(headers: [("apns-collapse-id", String(repeating: "x", count: 65))])) == "BadCollapseId")
        #expect(reason(request(headers: [("apns-priority", "5")])) == "DuplicateHeaders")
    }

    @Test func authenticationComesBeforeTokenAndTopic() {
        let request = ProviderRequest(
            headers: [(":method", "POST"), (":path", "/3/device/aaaa")], body: Data("{}".utf8))
        #expect(reason(request) == "MissingProviderToken")
    }

    @Test func realClientsTokensAreTolerated() {
        let now = Date().timeIntervalSince1970
        #expect(reason(request(authorization: "bearer \(jwt(iatJSON: "\(now - 5.5)"))")) == nil)
        #expect(reason(request(authorization: "bearer \(jwt(iatJSON: "\"\(Int(now))\""))")) == nil)
        #expect(reason(request(authorization: "bearer \(jwt(der: true))")) == nil)
    }

    @Test func payloadLimitsAreExact() {
        func body(size: Int) -> String {
            let prefix = #"{"aps":{"content-available":1},"x":""#
            return prefix + String(repeating: "a", count: size - prefix.utf8.count - 2) + #""}"#
        }
        #expect(body(size: 4096).utf8.count == 4096)
        #expect(reason(request(body: body(size: 4096))) == nil)
        #expect(reason(request(body: body(size: 4097))) == "PayloadTooLarge")
        let voip = { (size: Int) in
            ProviderRequest(
                headers: request(body: body(size: size), pushType: "voip", priority: "10").headers.map {
                    $0.name == "apns-topic" ? (name: $0.name, value: topic + ".voip") : $0
                }, body: Data(body(size: size).utf8))
        }
        #expect(reason(voip(5120)) == nil)
        #expect(reason(voip(5121)) == "PayloadTooLarge")
    }

    @Test func payloadThatIsNotAJSONObjectIsRefused() {
        #expect(reason(request(body: "{not json")) == "PayloadEmpty")
        #expect(reason(request(body: "[1,2]")) == "PayloadEmpty")
    }

    @Test func payloadRules() {
        #expect(reason(request(body: "")) == "PayloadEmpty")
        let large = #"{"aps":{"content-available":1},"x":""# + String(repeating: "a", count: 4100) + #""}"#
        #expect(reason(request(body: large)) == "PayloadTooLarge")
    }

    @Test func bearerTokens() {
        #expect(ProviderRequestValidator.bearerToken("bearer abc.def") == "abc.def")
        #expect(ProviderRequestValidator.bearerToken("Bearer abc") == "abc")
        #expect(ProviderRequestValidator.bearerToken("BEARER abc") == "abc")
        #expect(ProviderRequestValidator.bearerToken("bearer") == nil)
        #expect(ProviderRequestValidator.bearerToken("bearer ") == nil)
        #expect(ProviderRequestValidator.bearerToken("basic abc") == nil)
        #expect(ProviderRequestValidator.bearerToken("bearers abc") == nil)
        // Multi-byte characters after the scheme stay whole.
        #expect(ProviderRequestValidator.bearerToken("bearer é.x") == "é.x")
    }
}

/// The names the header check takes at sight are the lowercase tokens it would otherwise scan for.
@Suite struct KnownHeaderNameTests {
    @Test func knownNamesAreLowercaseTokens() {
        for name in RequestHeaderCheck.knownNames {
            #expect(RequestHeaderCheck.isKnownName(name), "\(name)")
            #expect(RequestHeaderCheck.isLowercaseToken(name), "\(name)")
        }
        for name in ["Authorization", "apns-topic ", "apns_topic", "apns-topi", "x-apns-id"] {
            #expect(!RequestHeaderCheck.isKnownName(name), "\(name)")
        }
        #expect(
            RequestHeaderCheck.problem(
                [(":method", "POST"), (":scheme", "https"), (":path", "/"), ("Apns-Topic", "a")], trailers: false)
                != nil)
    }

    static let block: [(name: String, value: String)] = [
        (":method", "POST"), (":scheme", "https"), (":path", "/3/device/ab"), ("authorization", "bearer x.y.z"),
        ("apns-topic", "com.example.app"),
    ]

    /// Fields equal to the ones at their places in a block that passed skip only their own checks.
    @Test func fieldsCheckedBeforeSkipOnlyTheirOwnChecks() {
        let checked = Self.block
        #expect(RequestHeaderCheck.problem(checked, trailers: false, checked: checked) == nil)
        // A field that changed is checked, however many others did not.
        var changed = checked
        changed[3].value = "bearer x.y\r\n.z"
        #expect(
            RequestHeaderCheck.problem(changed, trailers: false, checked: checked)
                == "field authorization: NUL, CR or LF in the value")
        changed = checked
        changed[4].name = "Apns-Topic"
        #expect(
            RequestHeaderCheck.problem(changed, trailers: false, checked: checked)
                == "field name 'Apns-Topic' is not a lowercase token")
        // The block's own rules hold for known fields too: here the known one is the second :path.
        let repeated = [(name: ":path", value: "/3/device/ab")] + checked.dropFirst()
        #expect(
            RequestHeaderCheck.problem(repeated, trailers: false, checked: checked)
                == "pseudo-header :path more than once")
        #expect(
            RequestHeaderCheck.problem(checked, trailers: true, checked: checked) == "pseudo-header :method in trailers"
        )
        #expect(
            RequestHeaderCheck.problem(Array(checked.prefix(2)), trailers: false, checked: checked)
                == "a request without :method, :scheme and :path")
        // A field known at its place is not checked again: a value the check would refuse (a
        // trailing space) passes when the block that passed had it there, and only there.
        let spaced = checked + [("x-note", "trailing ")]
        #expect(RequestHeaderCheck.problem(spaced, trailers: false, checked: spaced) == nil)
        #expect(
            RequestHeaderCheck.problem(spaced, trailers: false, checked: checked)
                == "field x-note: whitespace around the value")
        // A field is known only at its own place: one that passed elsewhere is checked where it is now.
        let moved = Array(checked.prefix(3)) + [("connection", "close")]
        #expect(
            RequestHeaderCheck.problem(moved, trailers: false, checked: checked + [("connection", "close")])
                == "connection-specific field connection")
    }
}

/// The word-at-a-time scan for NUL, CR and LF agrees with a byte-by-byte one on every position and length.
@Suite struct HeaderValueScanTests {
    @Test func everyPositionOfEveryForbiddenByteIsFound() {
        for length in 0...40 {
            for forbidden: UInt8 in [0x00, 0x0A, 0x0D, 0x0B, 0x0C, 0x09, 0x8A, 0x20] {
                for position in 0..<max(length, 1) where length > 0 {
                    var bytes = [UInt8](repeating: UInt8(ascii: "x"), count: length)
                    bytes[position] = forbidden
                    let expected = [0x00, 0x0A, 0x0D].contains(forbidden)
                    let found = bytes.withUnsafeBufferPointer { RequestHeaderCheck.containsNULCROrLF($0) }
                    #expect(found == expected, "length \(length), byte \(forbidden) at \(position)")
                }
                let clean = [UInt8](repeating: UInt8(ascii: "x"), count: length)
                #expect(!clean.withUnsafeBufferPointer { RequestHeaderCheck.containsNULCROrLF($0) })
            }
        }
    }
}
