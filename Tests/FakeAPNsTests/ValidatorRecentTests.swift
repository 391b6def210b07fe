import Foundation
import Testing

@testable import FakeAPNs

/// A connection's ``ProviderRequestValidator/Recent`` strings: the next request with the same path or
/// payload shares them, and nothing else changes what a request is found to be.
@Suite struct ValidatorRecentTests {
    let tokens = [String(repeating: "ab", count: 32), String(repeating: "cd", count: 32)]
    let validator: ProviderRequestValidator

    init() {
        let tokens = tokens
        validator = ProviderRequestValidator {
            tokens.contains($0) ? DeviceRecord(topic: "com.example.app", environment: "sandbox") : nil
        }
    }

    func request(path: String, body: String = #"{"aps":{"content-available":1}}"#) -> ProviderRequest {
        ProviderRequest(
            headers: [
                (":method", "POST"), (":path", path), ("apns-topic", "com.example.app"),
                ("apns-push-type", "background"), ("apns-priority", "5"),
            ], body: Data(body.utf8))
    }

    /// Validates with the connection's strings, a certificate standing in for the provider token.
    func validate(_ request: ProviderRequest, _ recent: inout ProviderRequestValidator.Recent) -> AcceptedNotification?
    {
        let certificate = ProviderCertificate(bundleId: "com.example.app", environments: ["sandbox"])
        let outcome = validator.validate(
            request, fields: request.fields, environment: "sandbox", certificate: certificate, recent: &recent
        ) { _ in nil }
        return try? outcome.get()
    }

    func storage(_ string: String) -> UnsafePointer<UInt8>? {
        string.utf8.withContiguousStorageIfAvailable { $0.baseAddress } ?? nil
    }

    @Test func theSamePathAndPayloadShareTheLastRequestsStrings() throws {
        var recent = ProviderRequestValidator.Recent()
        let path = "/3/device/\(tokens[0])"
        let first = try #require(validate(request(path: path), &recent))
        let second = try #require(validate(request(path: path), &recent))
        #expect(second.deviceToken == tokens[0])
        #expect(storage(second.deviceToken) == storage(first.deviceToken))
        #expect(storage(second.payload) == storage(first.payload))
        let other = try #require(validate(request(path: path, body: #"{"aps":{"badge":1}}"#), &recent))
        #expect(other.payload == #"{"aps":{"badge":1}}"#)
    }

    @Test func anotherDeviceGetsItsOwnToken() throws {
        var recent = ProviderRequestValidator.Recent()
        _ = validate(request(path: "/3/device/\(tokens[0])"), &recent)
        let next = try #require(validate(request(path: "/3/device/\(tokens[1])"), &recent))
        #expect(next.deviceToken == tokens[1])
    }

    @Test func aRefusedRequestLeavesTheStringsAsTheyWere() throws {
        var recent = ProviderRequestValidator.Recent()
        _ = validate(request(path: "/3/device/\(tokens[0])"), &recent)
        let remembered = recent
        #expect(validate(request(path: "/3/device/\(tokens[1])", body: "not json"), &recent) == nil)
        #expect(validate(request(path: "/3/device/" + String(repeating: "ef", count: 32)), &recent) == nil)
        #expect(recent.path == remembered.path && recent.payload == remembered.payload)
    }

    @Test func aMixedCaseTokenIsLowercasedEveryTime() throws {
        var recent = ProviderRequestValidator.Recent()
        let path = "/3/device/\(tokens[0].uppercased())"
        for _ in 0..<2 {
            let accepted = try #require(validate(request(path: path), &recent))
            #expect(accepted.deviceToken == tokens[0])
        }
        #expect(recent.path.isEmpty, "its path is not remembered: the token it names is not the one kept")
    }
}
