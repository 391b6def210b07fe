import AsyncHTTPClient
import Foundation
import HarnessTimeline
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS
import Recording

/// A recorded backend in its own place (`harness replay DIR --without-backend NAME`): it answers the
/// apps from the cassette, matched as the media server matches (the body choosing among requests that
/// differ only there), and does again what the backend did on its own (``BackendScript``), each thing
/// the recorded time after the request it followed, with this run's device tokens for the recorded ones.
/// What followed one request is done in its recorded order, each thing once the one before is done.
final class BackendStandIn: Sendable {
    let name: String
    private let cassette: Cassette
    private let timeline: Timeline
    private let stack: ServiceStack
    private let tokens: RecordedTokens
    private let output: @Sendable (String) -> Void
    private let state: LockedState<(playback: Playback, script: BackendScript)>
    /// The cues that followed one request, each with when it is due.
    typealias Batch = [(cue: BackendScript.Cue, at: ContinuousClock.Instant)]
    private let due: AsyncStream<Batch>
    private let schedule: AsyncStream<Batch>.Continuation
    /// How long a connection to a legacy service may take, from connecting to its end.
    static let legacyDeadline = TimeAmount.seconds(30)

    /// How the stand-in is ready, as `backend.ready` says it.
    static let readiness = "a stand-in answering from the cassette"

    /// - Parameter recorded: the cassette's timeline, read (``Cassette/timeline()`` blocks: read it off the
    ///   cooperative pool).
    init(
        name: String, cassette: Cassette, recorded: [TimelineEvent], matching: RequestMatching, timeline: Timeline,
        stack: ServiceStack, output: @escaping @Sendable (String) -> Void
    ) {
        self.name = name
        self.cassette = cassette
        self.timeline = timeline
        self.stack = stack
        self.output = output
        tokens = RecordedTokens(recorded: recorded)
        let script = BackendScript(
            backend: name, entries: cassette.har.log.entries, events: recorded,
            timelineAtStart: cassette.meta?.timelineAtStart)
        let playback = Playback(
            entries: cassette.har.log.entries, matching: matching, service: BackendScript.service(of: name))
        state = LockedState((playback, script))
        (due, schedule) = AsyncStream.makeStream()
    }

    /// Does what is due, each when it is due, until cancelled: first what the backend did before any
    /// app asked it anything, then what followed each request as the requests come. Each batch is a
    /// child task doing its cues in order, each no sooner than it is due and after the one before.
    func run() async {
        defer { schedule.finish() }
        schedule.yield(Self.batch(state.withLock { $0.script.answered(nil) }, from: .now))
        await withDiscardingTaskGroup { group in
            for await batch in due where !batch.isEmpty {
                group.addTask {
                    for (cue, at) in batch {
                        do {
                            try await Task.sleep(until: at, clock: .continuous)
                        } catch {
                            return
                        }
                        await self.perform(cue.action)
                    }
                }
            }
        }
    }

    private static func batch(_ cues: [BackendScript.Cue], from start: ContinuousClock.Instant) -> Batch {
        // Delays are bounded by the script (a day at most).
        cues.map { ($0, start.advanced(by: .milliseconds(Int64($0.delay.rounded())))) }
    }

    /// The recorded answer to an app's request, or a 502 naming the nearest recorded request.
    func answer(_ request: HTTPRequestHead, body: Data) async -> BackendDoor.Answer {
        let headers = request.headers.map { (name: $0.name, value: $0.value) }
        let text = body.isEmpty ? nil : String(decoding: body, as: UTF8.self)
        let now = ContinuousClock.now
        let answer = state.withLock {
            $0.playback.answer(method: request.method.rawValue, target: request.uri, headers: headers, body: text)
        }
        let index: Int
        switch answer {
        case .entry(let entry), .cut(let entry):
            index = entry
        case .notRecorded(let nearest):
            let said =
                "\(request.method.rawValue) \(request.uri.prefix(200)) was not recorded from backend \(name)"
                + (nearest.map { "; the nearest recorded request is \($0)" } ?? "")
            output("stand-in for backend \(name): " + said)
            return .text(502, said, header: (name: "X-Harness-Not-Recorded", value: String(said.prefix(300))))
        }
        let entry = cassette.har.log.entries[index]
        let bytes: Data
        do {
            bytes = try await read(index)
        } catch {
            return .text(502, "the recorded answer of entry \(index) cannot be read: \(error)")
        }
        // Only once the answer can be given: a request asked again after a failed read still causes them.
        schedule.yield(Self.batch(state.withLock { $0.script.answered(index) }, from: now))
        return BackendDoor.Answer(
            status: entry.response.status, reason: entry.response.statusText,
            headers: entry.response.headers.map { (name: $0.name, value: $0.value) }, body: bytes)
    }

    /// Entry `index`'s recorded body: in the HAR, or its file in the cassette, opened inside it and
    /// checked against its digest (``Cassette/openBody(of:)``) on NIO's blocking-I/O threads.
    private func read(_ index: Int) async throws -> Data {
        let size = cassette.har.log.entries[index].response.bodySize
        guard size <= BackendDoor.largestAnswer else {
            throw StandInError.bodyTooLarge(size)
        }
        let cassette = cassette
        return try await NIOThreadPool.singleton.runIfActive {
            guard let file = try cassette.openBody(of: index) else {
                guard case .inline(let data) = cassette.body(of: index) else { return Data() }
                return data
            }
            var data = Data(count: file.size)
            var done = 0
            try data.withUnsafeMutableBytes { buffer in
                while done < file.size {
                    let read = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]), at: done)
                    guard read > 0 else { throw StandInError.bodyFileShort(after: done) }
                    done += read
                }
            }
            return data
        }
    }

    private func perform(_ action: BackendScript.Action) async {
        let entries = cassette.har.log.entries
        let replacements = tokens.replacements(current: timeline.events)
        do {
            switch action {
            case .output(let line):
                timeline.publish(
                    .backendOutput, source: "backend", ["backend": name, "line": line, "replayed": "true"])
            case .legacyNotification(let index):
                let frame = try LegacyFrame(entry: entries[index], replacing: replacements)
                guard let port = stack.apns.legacyPort else {
                    throw StandInError.notListening(.legacyGateway)
                }
                let topic = topic(of: frame.token, replacements: replacements)
                try await exchange(port: port, topic: topic, sending: frame.bytes)
                output("stand-in for backend \(name): sent entry \(index) again through the legacy gateway")
            case .feedbackRead(let topic):
                guard let port = stack.apns.feedbackPort else {
                    throw StandInError.notListening(.feedbackService)
                }
                try await exchange(port: port, topic: topic, sending: [])
            case .parsePush(let index):
                let text = RecordedTokens.replacing(replacements, in: entries[index].request.postData?.text ?? "")
                try await PushClient.send(Data(text.utf8), to: stack)
                output("stand-in for backend \(name): sent entry \(index) again through Parse")
            case .providerRequest(let index):
                let status = try await sendProviderRequest(entries[index], replacements: replacements)
                output("stand-in for backend \(name): sent entry \(index) again to APNs, which answered \(status)")
            }
        } catch let failure as StepFailure {
            output("stand-in for backend \(name): \(describe(action)) failed: \(failure.message)")
        } catch {
            output("stand-in for backend \(name): \(describe(action)) failed: \(error)")
        }
    }

    private func describe(_ action: BackendScript.Action) -> String {
        switch action {
        case .output: "a line"
        case .legacyNotification(let index): "entry \(index) (a legacy notification)"
        case .feedbackRead(let topic): "the feedback read for \(topic)"
        case .parsePush(let index): "entry \(index) (a push through Parse)"
        case .providerRequest(let index): "entry \(index) (a request to APNs)"
        }
    }

    /// The topic a notification to `token` goes to: its device's app's, as recorded.
    private func topic(of token: [UInt8], replacements: [String: String]) -> String {
        let hex = token.map { String(format: "%02x", $0) }.joined()
        let recorded = replacements.first { $0.value == hex }?.key ?? hex
        return tokens.owners[recorded]?.topic ?? ""
    }

    /// A TLS client the legacy services take: a push certificate for `topic`, APNs's own CA trusted.
    private func tls(topic: String) throws -> TLSConfiguration {
        let issued = try stack.apns.authority.issuePushCertificate(
            bundleId: topic, environments: ["sandbox", "production"])
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([
            try NIOSSLCertificate(bytes: Array(stack.apns.authority.pem.utf8), format: .pem)
        ])
        tls.certificateChain = [
            .certificate(try NIOSSLCertificate(bytes: Array(issued.certificatePEM.utf8), format: .pem))
        ]
        tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(issued.privateKeyPEM.utf8), format: .pem))
        tls.certificateVerification = .noHostnameVerification
        return tls
    }

    /// Connects to a legacy service on `port` and, once TLS is up, writes `bytes` and closes, as a
    /// provider that has sent its notifications does; with nothing to write, waits until the service
    /// closes (the feedback service, once it has listed its tokens).
    private func exchange(port: Int, topic: String, sending bytes: [UInt8]) async throws {
        let context = try NIOSSLContext(configuration: tls(topic: topic))
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let handshake = loop.makePromise(of: Void.self)
        let ended = loop.makePromise(of: Void.self)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: loop)
                .connectTimeout(.seconds(10))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            NIOSSLClientHandler(context: context, serverHostname: nil))
                        try channel.pipeline.syncOperations.addHandler(
                            ConnectionWatch(handshake: handshake, ended: ended))
                    }
                }
                .connect(host: stack.apns.configuration.host, port: port).get()
        } catch {
            handshake.fail(error)
            ended.succeed(())
            throw error
        }
        // Neither a service that never answers nor a run that ends holds the stand-in.
        let deadline = channel.eventLoop.scheduleTask(in: Self.legacyDeadline) { channel.close(promise: nil) }
        defer { deadline.cancel() }
        try await withTaskCancellationHandler {
            do {
                try await handshake.futureResult.get()
                if bytes.isEmpty {
                    try await ended.futureResult.get()
                } else {
                    try await channel.writeAndFlush(ByteBuffer(bytes: bytes)).get()
                }
            } catch {
                channel.close(promise: nil)
                throw error
            }
            channel.close(promise: nil)
            try await channel.closeFuture.get()
        } onCancel: {
            channel.close(promise: nil)
        }
    }

    /// Sends a recorded HTTP/2 request to APNs again, with a push certificate for its topic in place of
    /// whatever credential it carried.
    private func sendProviderRequest(_ entry: HAR.Entry, replacements: [String: String]) async throws -> String {
        let path = URLComponents(string: entry.request.url)?.percentEncodedPath ?? "/"
        let token = LegacyFrame.bytes(hex: String(path.split(separator: "/").last ?? "")) ?? []
        // Without its topic, the app's whose token it is: a certificate for one app covers its topic.
        let topic = entry.requestHeader("apns-topic") ?? topic(of: token, replacements: [:])
        let client = HTTPClient(
            eventLoopGroupProvider: .shared(MultiThreadedEventLoopGroup.singleton),
            configuration: HTTPClient.Configuration(tlsConfiguration: try tls(topic: topic)))
        var request = HTTPClientRequest(url: stack.apns.url + RecordedTokens.replacing(replacements, in: path))
        request.method = .init(rawValue: entry.request.method)
        for header in entry.request.headers
        where !header.name.hasPrefix(":")
            && !["authorization", "host", "content-length"].contains(header.name.lowercased())
        {
            let value =
                header.name.lowercased() == "apns-expiration"
                ? RecordedExpiry.shifted(header.value, recordedAt: entry.startedDateTime, now: Date()) : header.value
            request.headers.add(name: header.name, value: value)
        }
        if let text = entry.request.postData?.text {
            request.body = .bytes(ByteBuffer(string: RecordedTokens.replacing(replacements, in: text)))
        }
        let answer: String
        do {
            let response = try await client.execute(request, timeout: .seconds(30))
            let body = try await response.body.collect(upTo: 1 << 20)
            answer = "\(response.status.code) \(String(buffer: body))".trimmingCharacters(in: .whitespaces)
        } catch {
            // The request's own error is the one to say; a client that also fails to shut down adds
            // nothing to it (its connections close with the event loop's).
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
        return answer
    }
}

/// Why a stand-in could not do something a recorded backend did.
enum StandInError: Error, Equatable, CustomStringConvertible {
    /// What the APNs side lacks for a recorded legacy exchange.
    enum Service: Equatable {
        case legacyGateway, feedbackService
    }

    /// A recorded body larger than a door answers.
    case bodyTooLarge(Int)
    /// A recorded body's file ended before its recorded size.
    case bodyFileShort(after: Int)
    /// The legacy gateway or the feedback service is not listening.
    case notListening(Service)

    var description: String {
        switch self {
        case .bodyTooLarge(let size): "it is \(size) bytes, more than a door answers"
        case .bodyFileShort(let done): "its file ended after \(done) bytes"
        case .notListening(.legacyGateway): "the legacy gateway is not listening (services.apns.legacyPort)"
        case .notListening(.feedbackService): "the feedback service is not listening (services.apns.feedbackPort)"
        }
    }
}

/// Says when a connection's TLS handshake is done and when the connection has ended.
private final class ConnectionWatch: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let handshake: EventLoopPromise<Void>
    private let ended: EventLoopPromise<Void>

    init(handshake: EventLoopPromise<Void>, ended: EventLoopPromise<Void>) {
        self.handshake = handshake
        self.ended = ended
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // What the service says is not the stand-in's to read: the feedback list was recorded.
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent { handshake.succeed(()) }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        handshake.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        handshake.fail(ChannelError.eof)
        ended.succeed(())
        context.fireChannelInactive()
    }
}
