import AsyncHTTPClient
import Foundation
import HarnessTimeline
import NIOCore
import NIOHTTP1
import NIOPosix
import Recording

/// A backend's door for the apps, when a run records (each exchange passes to the backend and is
/// recorded on `app→backend`, service `backend:<name>`) or a replay stands in for the backend (each
/// request is answered from the cassette). The apps' `HARNESS_BACKEND_<NAME>_URL` names the door.
/// Plain HTTP/1.1, whole messages: a request body of at most 1 MiB, an answer of at most 16 MiB.
final class BackendDoor: Sendable {
    enum Mode: Sendable {
        /// Passes each request to the backend on `port` and records the exchange.
        case forward(port: Int, recorder: CassetteRecorder)
        /// Answers from the cassette in the backend's place.
        case standIn(BackendStandIn)
    }

    typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>

    static let largestRequest = 1 << 20
    static let largestAnswer = 16 << 20

    let name: String
    let mode: Mode
    let port: Int
    private let listener: NIOAsyncChannel<Connection, Never>
    /// The door's own client to the backend: the answer as the backend gave it, a redirect passed to
    /// the app and a compressed body left compressed (a browser-like client would follow the one and
    /// undo the other).
    private let client: HTTPClient?

    private init(name: String, mode: Mode, listener: NIOAsyncChannel<Connection, Never>, port: Int) {
        self.name = name
        self.mode = mode
        self.listener = listener
        self.port = port
        if case .forward = mode {
            client = HTTPClient(
                eventLoopGroupProvider: .singleton,
                configuration: HTTPClient.Configuration(redirectConfiguration: .disallow, decompression: .disabled))
        } else {
            client = nil
        }
    }

    /// The door's URL, as the apps are told it.
    var url: String { "http://127.0.0.1:\(port)" }

    /// Opens the door on a free loopback port; it serves once ``run()`` runs.
    static func open(name: String, mode: Mode) async throws -> BackendDoor {
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .bind(host: "127.0.0.1", port: 0) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    return try Connection(wrappingChannelSynchronously: channel)
                }
            }
        return BackendDoor(name: name, mode: mode, listener: listener, port: listener.channel.localAddress?.port ?? 0)
    }

    /// Closes the door, served or not (a run that failed before its steps), and its client.
    func close() async {
        // Closed already, when it was served: that is no failure.
        try? await listener.channel.close()
        do {
            try await client?.shutdown()
        } catch {
            // Shut down already: a second close.
        }
    }

    /// Serves until cancelled: each connection, and each thing a stand-in does on its own, is a child.
    func run() async {
        let listener = listener
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                if case .standIn(let standIn) = mode {
                    group.addTask { await standIn.run() }
                }
                do {
                    try await listener.executeThenClose { inbound in
                        for try await connection in inbound {
                            group.addTask { await self.serve(connection) }
                        }
                    }
                } catch {
                    // The listener closed: the run is ending.
                }
                group.cancelAll()
            }
        } onCancel: {
            listener.channel.close(promise: nil)
        }
    }

    private func serve(_ connection: Connection) async {
        let channel = connection.channel
        await withTaskCancellationHandler {
            do {
                try await connection.executeThenClose { inbound, outbound in
                    var head: HTTPRequestHead?
                    var body = ByteBuffer()
                    var tooLarge = false
                    for try await part in inbound {
                        switch part {
                        case .head(let started):
                            head = started
                            body.clear()
                            tooLarge = false
                        case .body(var chunk):
                            if body.readableBytes + chunk.readableBytes > Self.largestRequest {
                                tooLarge = true
                            } else {
                                body.writeBuffer(&chunk)
                            }
                        case .end:
                            guard let request = head else { continue }
                            head = nil
                            let answer =
                                tooLarge
                                ? Answer.text(
                                    413,
                                    "the request body is over \(Self.largestRequest) bytes, "
                                        + "which the harness's door to backend \(name) takes")
                                : await answer(request, body: Data(buffer: body))
                            try await write(answer, to: request, outbound)
                            if !request.isKeepAlive || tooLarge { return }
                        }
                    }
                }
            } catch {
                // The app went away: nothing to answer.
            }
        } onCancel: {
            channel.close(promise: nil)
        }
    }

    /// A whole answer.
    struct Answer: Sendable {
        var status: Int
        var reason: String
        var headers: [(name: String, value: String)]
        var body: Data

        static func text(_ status: Int, _ text: String, header: (name: String, value: String)? = nil) -> Answer {
            Answer(
                status: status, reason: HTTPResponseStatus(statusCode: status).reasonPhrase,
                headers: [(name: "Content-Type", value: "text/plain; charset=utf-8")] + (header.map { [$0] } ?? []),
                body: Data(text.utf8))
        }
    }

    private func answer(_ request: HTTPRequestHead, body: Data) async -> Answer {
        switch mode {
        case .forward(let port, let recorder):
            return await forward(request, body: body, to: port, recorder: recorder)
        case .standIn(let standIn):
            return await standIn.answer(request, body: body)
        }
    }

    private func write(
        _ answer: Answer, to request: HTTPRequestHead, _ outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>
    ) async throws {
        var headers = HTTPHeaders()
        for header in answer.headers
        where !Self.hopByHop.contains(header.name.lowercased()) && header.name.lowercased() != "content-length" {
            headers.add(name: header.name, value: header.value)
        }
        headers.add(name: "Content-Length", value: "\(answer.body.count)")
        headers.add(name: "Connection", value: request.isKeepAlive ? "keep-alive" : "close")
        let status = HTTPResponseStatus(statusCode: answer.status, reasonPhrase: answer.reason)
        try await outbound.write(.head(HTTPResponseHead(version: request.version, status: status, headers: headers)))
        if request.method != .HEAD, !answer.body.isEmpty {
            try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: answer.body))))
        }
        try await outbound.write(.end(nil))
    }

    /// Headers that belong to one connection, not to the message (RFC 9110 §7.6.1), and `Host`.
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "host",
    ]

    /// Passes the request to the backend, records the exchange, returns the backend's answer (a 502
    /// saying why when it cannot be reached; that is not recorded: the backend gave no answer).
    private func forward(_ request: HTTPRequestHead, body: Data, to port: Int, recorder: CassetteRecorder) async
        -> Answer
    {
        let headers = request.headers.map { (name: $0.name, value: $0.value) }
        let recording = recorder.exchange(
            service: BackendScript.service(of: name), link: "app→backend", connection: nil,
            method: request.method.rawValue, url: "backend://\(name)\(request.uri)", httpVersion: "HTTP/1.1",
            headers: headers, requestBody: body.isEmpty ? nil : String(decoding: body, as: UTF8.self),
            requestMimeType: request.headers.first(name: "content-type") ?? "")
        var outgoing = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(request.uri)")
        outgoing.method = .init(rawValue: request.method.rawValue)
        for header in request.headers where !Self.hopByHop.contains(header.name.lowercased()) {
            outgoing.headers.add(name: header.name, value: header.value)
        }
        if !body.isEmpty { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let answer: Answer
        do {
            guard let client else { throw ChannelError.ioOnClosedChannel }
            let response = try await client.execute(outgoing, timeout: .seconds(60))
            let bytes = try await response.body.collect(upTo: Self.largestAnswer)
            answer = Answer(
                status: Int(response.status.code), reason: response.status.reasonPhrase,
                headers: response.headers.filter { !Self.hopByHop.contains($0.name.lowercased()) }
                    .map { (name: $0.name, value: $0.value) }, body: Data(buffer: bytes))
        } catch let error as NIOTooManyBytesError {
            return .text(
                502,
                "backend \(name) answered with more than \(Self.largestAnswer) bytes, which the door takes (\(error))",
                header: (name: "X-Harness-Error", value: "backend \(name) answered with too much"))
        } catch {
            return .text(
                502, "backend \(name) on port \(port) gave no answer: \(error)",
                header: (name: "X-Harness-Error", value: "backend \(name) gave no answer"))
        }
        recording.head(status: answer.status, statusText: answer.reason, headers: answer.headers)
        recording.write(answer.body)
        recording.finish()
        return answer
    }
}
