import Crypto
import Foundation
import HarnessTimeline
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import ParseModel

/// Parse's push adapter: sends notifications to APNs over one HTTP/2 connection with TLS, a batch at a
/// time, with a provider token (ES256 JWT) refreshed every 50 minutes as Apple asks (not more often
/// than every 20, not older than 60). The connection is opened at the first push and opened again when
/// it ends (GOAWAY, a close, a timeout).
final class APNsProvider: Sendable {
    /// What APNs answered to one notification.
    struct Outcome: Sendable, Equatable {
        var status: Int
        var apnsId: String?
        var reason: String?
    }

    /// Why a notification has no answer, in words for the push's outcome.
    /// Why a notification has no answer: the connection's own reasons and the provider's (no token, no
    /// connection), in one type.
    typealias Failure = APNsStreams.Failure

    /// How long a batch may wait for its last answer.
    static let timeout = TimeAmount.seconds(30)
    static let connectTimeout = TimeAmount.seconds(5)

    private let configuration: APNsProviderConfiguration
    private let host: String
    private let port: Int
    private let authority: String
    /// The name sent in TLS's SNI and checked against the certificate; nil for an IP address, which is
    /// checked against the certificate's addresses instead.
    private let serverHostname: String?
    private let tls: NIOSSLContext
    private let key: P256.Signing.PrivateKey
    private let token = LockedToken()
    private let connection = LockedState<Connection?>(nil)
    /// Every connection not yet closed: a replaced one is left to finish its answers (its handler closes
    /// it after the last).
    private let openChannels = LockedState<[ObjectIdentifier: any Channel]>([:])

    private struct Connection {
        var generation: Int
        var channel: EventLoopFuture<any Channel>
    }

    /// What Parse's requests to APNs say they come from.
    static let userAgent = "PushHarness FakeParse"

    init(configuration: APNsProviderConfiguration) throws {
        self.configuration = configuration
        guard let url = URL(string: configuration.url), url.scheme == "https", let host = url.host(), !host.isEmpty
        else {
            throw ParseConfigurationError.apnsURLNotHTTPS(configuration.url)
        }
        self.host = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        port = url.port ?? 443
        guard (1...65_535).contains(port) else {
            throw ParseConfigurationError.apnsURLPortUnusable(configuration.url)
        }
        authority = port == 443 ? host : "\(host):\(port)"
        serverHostname = (try? SocketAddress(ipAddress: self.host, port: 0)) == nil ? self.host : nil
        let pem: String
        do {
            pem = try String(contentsOfFile: configuration.keyFile, encoding: .utf8)
        } catch {
            throw ParseConfigurationError.keyFileUnreadable(configuration.keyFile, error: error.localizedDescription)
        }
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw ParseConfigurationError.keyFileNotP256(configuration.keyFile, error: "\(error)")
        }
        var tlsConfiguration = TLSConfiguration.makeClientConfiguration()
        tlsConfiguration.applicationProtocols = ["h2"]
        if let caFile = configuration.caFile { tlsConfiguration.additionalTrustRoots = [.file(caFile)] }
        do {
            tls = try NIOSSLContext(configuration: tlsConfiguration)
        } catch {
            throw ParseConfigurationError.tlsUnusable(caFile: configuration.caFile, error: "\(error)")
        }
    }

    /// Sends the notifications together and returns, in their order, what APNs answered to each or why
    /// there is no answer.
    func send(_ notifications: [ApplePush]) async -> [Result<Outcome, Failure>] {
        guard !notifications.isEmpty else { return [] }
        let bearer: String
        do {
            bearer = "bearer " + (try providerToken())
        } catch {
            return Array(
                repeating: .failure(Failure(description: "cannot sign the provider token: \(error)")),
                count: notifications.count)
        }
        let requests = notifications.map { request(for: $0, bearer: bearer) }
        let sendable = requests.compactMap { try? $0.get() }
        var answers = await send(sendable)
        // What APNs refused unread in a GOAWAY goes once more, on a new connection.
        let refused = answers.indices.filter {
            if case .failure(let failure) = answers[$0] { failure.unprocessed } else { false }
        }
        if !refused.isEmpty {
            for (index, answer) in zip(refused, await send(refused.map { sendable[$0] })) { answers[index] = answer }
        }
        // Requests refused before sending keep their own failure; the rest take their answers in order.
        var next = answers.makeIterator()
        return requests.map { request in request.flatMap { _ in next.next()! } }
    }

    private func send(_ requests: [APNsConnectionHandler.Request]) async -> [Result<Outcome, Failure>] {
        guard !requests.isEmpty else { return [] }
        var stale: Int?
        var lastEnd = ""
        // A connection that ended before it took the batch (nothing was sent) is replaced once.
        for _ in 0..<2 {
            let (generation, opening) = channel(replacing: stale)
            let channel: any Channel
            do {
                channel = try await opening.get()
            } catch {
                forget(generation)
                let failure = Failure(description: "cannot connect to APNs at \(configuration.url): \(error)")
                return Array(repeating: .failure(failure), count: requests.count)
            }
            let promise = channel.eventLoop.makePromise(of: [APNsStreams.Outcome].self)
            channel.writeAndFlush(APNsConnectionHandler.Batch(requests: requests, promise: promise)).whenFailure {
                promise.fail($0)  // the batch never reached the handler
            }
            do {
                return try await promise.futureResult.get().map { $0.map(Self.outcome) }
            } catch let unusable as APNsConnectionHandler.Unusable {
                lastEnd = unusable.why.map { ": " + $0 } ?? ""
                stale = generation
            } catch {
                lastEnd = ": \(error)"
                stale = generation
            }
        }
        let failure = Failure(
            description: "the connection to APNs at \(configuration.url) ended twice before it took the push" + lastEnd)
        return Array(repeating: .failure(failure), count: requests.count)
    }

    /// Closes every connection, the current one and any still answering after it was replaced.
    func shutdown() async {
        let current = connection.withLock { $0 }
        // Waits for a connection still opening; one that failed to open has nothing to close.
        _ = try? await current?.channel.get()
        for channel in openChannels.withLock({ Array($0.values) }) { try? await channel.close() }
    }

    /// The connection to send on: the current one, or a new one when there is none or it is `stale`.
    private func channel(replacing stale: Int?) -> (Int, EventLoopFuture<any Channel>) {
        let (current, isNew) = connection.withLock { current in
            if let open = current, open.generation != stale { return (open, false) }
            let made = Connection(generation: (current?.generation ?? 0) + 1, channel: connect())
            current = made
            return (made, true)
        }
        // Outside the lock: a callback may run at once.
        if isNew {
            // A connection that ends is forgotten, so that the next batch opens another.
            current.channel.whenSuccess { [self] channel in
                let id = ObjectIdentifier(channel)
                openChannels.withLock { $0[id] = channel }
                channel.closeFuture.whenComplete { _ in
                    self.openChannels.withLock { _ = $0.removeValue(forKey: id) }
                    self.forget(current.generation)
                }
            }
        }
        return (current.generation, current.channel)
    }

    private func forget(_ generation: Int) {
        connection.withLock { current in
            if current?.generation == generation { current = nil }
        }
    }

    private func connect() -> EventLoopFuture<any Channel> {
        let tls = self.tls
        let serverHostname = self.serverHostname
        return ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(Self.connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handlers = channel.pipeline.syncOperations
                    try handlers.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverHostname))
                    try handlers.addHandler(NIOHTTP2Handler(mode: .client))
                    try handlers.addHandler(APNsConnectionHandler(timeout: Self.timeout))
                }
            }
            .connect(host: host, port: port)
    }

    /// One notification's HTTP/2 request, or why it cannot be one.
    private func request(for notification: ApplePush, bearer: String) -> Result<APNsConnectionHandler.Request, Failure>
    {
        // The token is the client's text: escaped, so that it can only ever be one path segment.
        let token = notification.deviceToken.addingPercentEncoding(withAllowedCharacters: Self.segment) ?? ""
        let body = ByteBuffer(bytes: ParseJSON.bytes(notification.payload))
        var headers = HPACKHeaders()
        headers.reserveCapacity(12)
        headers.add(name: ":method", value: "POST")
        headers.add(name: ":scheme", value: "https")
        headers.add(name: ":path", value: "/3/device/" + token, indexing: .nonIndexable)
        headers.add(name: ":authority", value: authority)
        headers.add(name: "authorization", value: bearer)
        // A recording tells Parse's own requests from a backend's by it (docs/cassettes.md).
        headers.add(name: "user-agent", value: Self.userAgent)
        // An installation without an appIdentifier sends no topic; APNs answers for it (MissingTopic).
        var fields = [("apns-push-type", notification.pushType), ("apns-priority", notification.priority)]
        if !notification.topic.isEmpty { fields.append(("apns-topic", notification.topic)) }
        if let expiration = notification.expiration { fields.append(("apns-expiration", "\(expiration)")) }
        if let collapseId = notification.collapseId { fields.append(("apns-collapse-id", collapseId)) }
        for (name, value) in fields {
            // RFC 9113 section 8.2.1: a field value has no NUL, CR or LF, and no space at either end.
            guard Self.isFieldValue(value) else {
                return .failure(
                    Failure(
                        description: "\(name) cannot be sent in an HTTP header: \(value.debugDescription.prefix(80))"))
            }
            headers.add(name: name, value: value, indexing: name == "apns-collapse-id" ? .nonIndexable : .indexable)
        }
        headers.add(name: "content-length", value: "\(body.readableBytes)")
        return .success(APNsConnectionHandler.Request(headers: headers, body: body))
    }

    private static let segment: CharacterSet = {
        var segment = CharacterSet.urlPathAllowed
        segment.remove(charactersIn: "/?#%;")
        return segment
    }()

    static func isFieldValue(_ value: String) -> Bool {
        let bytes = value.utf8
        if let first = bytes.first, first == 0x20 || first == 0x09 { return false }
        if let last = bytes.last, last == 0x20 || last == 0x09 { return false }
        return !bytes.contains { $0 == 0 || $0 == 0x0A || $0 == 0x0D }
    }

    private static func outcome(_ answer: APNsStreams.Answer) -> Outcome {
        var reason: String?
        if answer.body.readableBytes > 0,
            let object = try? JSONSerialization.jsonObject(with: Data(answer.body.readableBytesView)) as? [String: Any]
        {
            reason = object["reason"] as? String
        }
        return Outcome(status: answer.status, apnsId: answer.apnsId, reason: reason)
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
public enum ParseConfigurationError: Error, Equatable, CustomStringConvertible {
    /// `apns.url` is not `https://host[:port]`.
    case apnsURLNotHTTPS(String)
    /// `apns.url`'s port is not 1 to 65535.
    case apnsURLPortUnusable(String)
    /// The `.p8` key file cannot be read.
    case keyFileUnreadable(String, error: String)
    /// The key file holds no PKCS#8 P-256 key.
    case keyFileNotP256(String, error: String)
    /// TLS towards APNs cannot be set up (the CA file, when one is given).
    case tlsUnusable(caFile: String?, error: String)
    /// The SQLite database cannot be opened.
    case databaseUnusable(String, error: String)

    public var description: String {
        switch self {
        case .apnsURLNotHTTPS(let url): "the APNs URL \(url) is not https://host[:port]"
        case .apnsURLPortUnusable(let url): "the APNs URL \(url) has no usable port"
        case .keyFileUnreadable(let file, let error): "cannot read the APNs key file \(file): \(error)"
        case .keyFileNotP256(let file, let error): "the APNs key file \(file) is not a PKCS#8 P-256 key (.p8): \(error)"
        case .tlsUnusable(let caFile, let error): "cannot set up TLS for APNs (CA file \(caFile ?? "none")): \(error)"
        case .databaseUnusable(let path, let error): "cannot open the Parse database \(path): \(error)"
        }
    }
}
