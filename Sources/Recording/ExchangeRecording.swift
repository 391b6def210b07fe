import Crypto
import Foundation
import HarnessTimeline

/// One exchange being recorded, by the one task that answers it: the response head, each body write
/// with its time, and the fault that cut it, if one did. ``finish()`` hands it to the journal.
public final class ExchangeRecording {
    private let recorder: CassetteRecorder
    private var entry: HAR.Entry
    private let begun = ContinuousClock.now
    private var headAt: ContinuousClock.Instant?
    private var lastWriteAt: ContinuousClock.Instant?
    private var writes: [[Double]] = []
    private let body: BodyRecording
    private var finished = false

    init(
        recorder: CassetteRecorder, service: String, link: String, connection: String?, request: HAR.Request,
        offset: Double
    ) {
        self.recorder = recorder
        self.body = BodyRecording(store: recorder.store)
        let timings = HAR.Timings(send: 0, wait: 0, receive: 0)
        let response = HAR.Response(
            status: 0, statusText: "", httpVersion: request.httpVersion, headers: [],
            content: HAR.Content(size: 0, mimeType: ""))
        entry = HAR.Entry(
            startedDateTime: HARDate.string(Date()), request: request, response: response, timings: timings)
        entry.service = service
        entry.link = link
        entry.connection = connection
        entry.offset = offset
    }

    /// The status line and headers, as they went out.
    public func head(status: Int, statusText: String, headers: [(name: String, value: String)]) {
        headAt = .now
        entry.response.status = status
        entry.response.statusText = statusText
        entry.response.headers = recorder.redactor.redact(headers.map { HAR.Header(name: $0.name, value: $0.value) })
    }

    /// A body write, as it was handed to the connection.
    public func write(_ bytes: UnsafeRawBufferPointer) {
        let now = ContinuousClock.now
        let at = CassetteRecorder.milliseconds((headAt ?? begun).duration(to: now))
        writes.append([(at * 1000).rounded() / 1000, Double(bytes.count)])
        lastWriteAt = now
        body.append(bytes)
    }

    /// The fault that ended the body early, after the bytes written so far, of `of` planned.
    public func fault(kind: String, how: String, of: Int? = nil) {
        entry.fault = HAR.Fault(kind: kind, atByte: body.size, how: how, of: of)
    }

    /// The exchange ended early with no fault rule (the connection broke): the body stops where it is.
    /// A body whose declared length had all gone out was not cut: the client closed after it (curl does,
    /// once it has the bytes it was promised), before the response's end was handed over.
    public func cutShort() {
        guard entry.fault == nil else { return }
        let declared = entry.responseHeader("content-length").flatMap(Int.init)
        if let declared, body.size >= declared { return }
        entry.fault = HAR.Fault(kind: HAR.Fault.connectionClosed, atByte: body.size, how: "stall", of: declared)
    }

    /// A body write of bytes in hand.
    public func write(_ data: Data) {
        data.withUnsafeBytes { write($0) }
    }

    /// The HTTP/2 stream the exchange used.
    public func stream(_ id: Int) {
        entry.h2 = HAR.HTTP2(streamId: id)
    }

    /// A fault rule that applied, with its attributes as the timeline has them.
    public func applied(_ fault: [String: String]) {
        entry.applied = (entry.applied ?? []) + [fault]
    }

    /// Adds the entry to the cassette; only the first call counts.
    public func finish() {
        guard !finished else { return }
        finished = true
        let headAt = headAt ?? .now
        if entry.fault == nil, let declared = entry.responseHeader("content-length").flatMap(Int.init),
            entry.response.status != 304, entry.request.method != "HEAD", body.size < declared
        {
            // Cut short with no fault rule: the client went away, or the run ended mid-body. Replayed,
            // the connection stays open after the bytes, for the client to end as it did.
            entry.fault = HAR.Fault(kind: HAR.Fault.connectionClosed, atByte: body.size, how: "stall", of: declared)
        } else if entry.fault == nil, entry.response.status == 0 {
            entry.fault = HAR.Fault(kind: HAR.Fault.connectionClosed, atByte: 0, how: "FIN")
        }
        let mimeType = entry.responseHeader("content-type") ?? ""
        // The content is what was returned: a cut body's size is the bytes before the cut.
        entry.response.content = body.finish(mimeType: mimeType)
        entry.response.bodySize = body.size
        entry.writes = writes
        if let failure = body.failure {
            recorder.fail(failure)
            return
        }
        redactText()
        entry.timings = HAR.Timings(
            send: 0, wait: CassetteRecorder.milliseconds(begun.duration(to: headAt)),
            receive: lastWriteAt.map { CassetteRecorder.milliseconds(headAt.duration(to: $0)) } ?? 0)
        entry.time = entry.timings.total
        recorder.append(entry)
    }
}

extension ExchangeRecording {
    /// A text body with a secret in it is stored with the secret replaced: its size and digest become
    /// the redacted text's, and its writes one write of it (the pacing of a body that held a secret is
    /// not kept).
    fileprivate func redactText() {
        let content = entry.response.content
        guard content.encoding == nil, let text = content.text else { return }
        let redacted = recorder.redactor.redact(text)
        guard redacted != text else { return }
        let bytes = Data(redacted.utf8)
        entry.response.content.text = redacted
        entry.response.content.size = bytes.count
        entry.response.content.sha256 = BodyStore.hex(SHA256.hash(data: bytes))
        entry.response.bodySize = bytes.count
        entry.writes = [[entry.writes?.first?[0] ?? 0, Double(bytes.count)]]
        entry.fault?.atByte = bytes.count
    }
}
