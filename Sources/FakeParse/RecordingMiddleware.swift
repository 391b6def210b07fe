import Foundation
import HTTPTypes
import HarnessTimeline
import Hummingbird
import ParseModel
import Recording

/// Records each Parse exchange into a cassette: the request with its body, the answer with its body,
/// errors included as the client saw them. `/push` is a backend's request (`backend→parse`); everything
/// else comes from an app (`app→parse`).
struct RecordingMiddleware<Context: RequestContext>: RouterMiddleware {
    let recorder: CassetteRecorder
    /// The server's origin, for the recorded URL.
    let origin: @Sendable () -> String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        // The dashboard's page and files are no exchange of the app's or the backend's.
        guard request.uri.path.hasPrefix("/parse/") else { return try await next(request, context) }
        var request = request
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: ParseRoutes.largestBody)
        } catch {
            return ParseReply(ParseRoutes.tooLarge).response
        }
        let path = request.uri.path
        let recording = recorder.exchange(
            service: "parse", link: path.hasSuffix("/push") ? "backend→parse" : "app→parse", connection: nil,
            method: request.method.rawValue, url: origin() + request.uri.description, httpVersion: "HTTP/1.1",
            headers: request.headers.map { ($0.name.rawName, $0.value) },
            requestBody: body.readableBytes > 0 ? String(buffer: body) : nil,
            requestMimeType: request.headers[.contentType] ?? "")
        defer { recording.finish() }
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        } catch {
            recording.head(status: 500, statusText: "Internal Server Error", headers: [])
            throw error
        }
        // Parse's answers are small JSON: collected, recorded, and sent as they were.
        let collector = BodyCollector()
        try await response.body.write(CollectingWriter(into: collector))
        let bytes = collector.buffer.withLock { $0 }
        response.body = ResponseBody(byteBuffer: bytes)
        recording.head(
            status: Int(response.status.code), statusText: response.status.reasonPhrase,
            headers: response.headers.map { ($0.name.rawName, $0.value) })
        recording.write(Data(bytes.readableBytesView))
        return response
    }
}

private final class BodyCollector: Sendable {
    let buffer = LockedState(ByteBuffer())
}

private struct CollectingWriter: ResponseBodyWriter {
    let collector: BodyCollector

    init(into collector: BodyCollector) { self.collector = collector }

    mutating func write(_ buffer: ByteBuffer) async throws {
        var buffer = buffer
        collector.buffer.withLock { _ = $0.writeBuffer(&buffer) }
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
