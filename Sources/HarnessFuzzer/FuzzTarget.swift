import DeviceProtocol
@_spi(Fuzzing) import FakeAPNs
@_spi(Fuzzing) import FakeParse
@_spi(Fuzzing) import FaultProxy
import Foundation
import HarnessCore
@_spi(Fuzzing) import MediaServer

/// What the fuzzer can aim at: each surface where bytes from outside enter the harness. None may crash
/// or hang, whatever it is given. Each has its corpus in `Tests/Fuzz/<name>/`.
enum FuzzTarget: String, CaseIterable {
    /// The provider API: request headers and body, the JWT, a client certificate.
    case providerRequest = "provider-request"
    /// The provider API's HTTP/2: a connection's bytes after the preface, through libnghttp2 and the
    /// handlers above it to the validator.
    case providerConnection = "provider-http2"
    /// The legacy binary gateway: a connection's bytes, commands 0, 1 and 2.
    case legacyGateway = "legacy-gateway"
    /// The media server: request target, `Range` and conditionals, glob patterns, fault rules and settings.
    case mediaRequest = "media-request"
    /// The control APIs' JSON bodies: APNs failures, rate limits, certificates; media faults and settings.
    case controlJSON = "control-json"
    /// Parse's push request: the `where` query, expirations, the payload and its badge.
    case parsePush = "parse-push"
    /// Parse's `where` clause with `$regex` (under its budget of steps) against long fields.
    case parseWhere = "parse-where"
    /// Toxiproxy's JSON: a proxy (name, listen, upstream), an array of them (with the loop rule), a toxic.
    case toxiproxyJSON = "toxiproxy-json"
    /// A cassette's `traffic.har` (or a foreign HAR file) and a recording's journal cut short.
    case cassette = "cassette"
    /// harness.yml as `harness run` reads it.
    case harnessYML = "harness-yml"
    /// A line on the device socket and the params of every method.
    case deviceMessage = "device-message"

    func run(_ bytes: [UInt8]) {
        switch self {
        case .providerRequest: ProviderRequestTarget.run(bytes)
        case .providerConnection: FakeAPNsFuzzing.providerConnection(bytes)
        case .legacyGateway: FakeAPNsFuzzing.legacyStream(bytes)
        case .mediaRequest: MediaServerFuzzing.request(bytes)
        case .controlJSON:
            FakeAPNsFuzzing.controlBody(bytes)
            MediaServerFuzzing.controlBody(bytes)
        case .parsePush: FakeParseFuzzing.push(bytes)
        case .parseWhere: FakeParseFuzzing.whereClause(bytes)
        case .toxiproxyJSON: FaultProxyFuzzing.body(bytes)
        case .cassette: CassetteTarget.run(bytes)
        case .harnessYML: _ = try? ConfigurationLoader.parse(String(decoding: bytes, as: UTF8.self), file: "fuzz.yml")
        case .deviceMessage: DeviceMessageTarget.run(bytes)
        }
    }
}
