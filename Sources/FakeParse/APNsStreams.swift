import NIOCore

/// The provider's side of one HTTP/2 connection to APNs, as a value: which request went out on which
/// stream, each answer as its frames arrive, and when a batch of requests is answered in full. The
/// channel handler around it only moves frames; every decision is here, and tested without sockets.
///
/// A batch is what Parse's push pipeline sends at once (up to 100 devices): its requests take
/// consecutive client stream ids, and it is finished when each has an answer or a failure.
struct APNsStreams {
    /// The highest stream id a client may open (RFC 9113 section 5.1.1): a connection that reaches it is
    /// spent, and the provider opens another.
    static let lastStreamID = Int(Int32.max)
    /// An answer's body beyond this is not APNs's (its error bodies are a few dozen bytes). Below a
    /// stream's receive window, so that a larger one is refused rather than left waiting for a window.
    static let maximumAnswerBody = 16 * 1024

    /// What APNs answered on one stream.
    struct Answer: Equatable, Sendable {
        var status: Int
        var apnsId: String?
        var body: ByteBuffer
    }

    /// Why a request has no answer.
    struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        var description: String
        /// APNs said it never took the request (a stream above GOAWAY's last stream id): it can be sent
        /// again on another connection without reaching the device twice.
        var unprocessed = false

        static func connectionClosed(_ why: String?) -> Failure {
            Failure(description: "the connection to APNs closed before it answered" + (why.map { ": " + $0 } ?? ""))
        }
        static func goingAway(_ code: String) -> Failure {
            Failure(
                description: "APNs closed the connection (GOAWAY \(code)) before taking the request", unprocessed: true)
        }
        /// `REFUSED_STREAM` says APNs did not process the request (RFC 9113 section 8.7).
        static func reset(_ code: String, unprocessed: Bool = false) -> Failure {
            Failure(description: "APNs reset the stream (\(code))", unprocessed: unprocessed)
        }
        /// The request's END_STREAM never left, so APNs cannot have processed it.
        static func notSent(_ why: String) -> Failure {
            Failure(description: "the request could not be sent to APNs: \(why)", unprocessed: true)
        }
        static func timedOut(seconds: Int) -> Failure {
            Failure(description: "APNs did not answer within \(seconds) s")
        }
        static func malformed(_ what: String) -> Failure { Failure(description: "APNs's answer \(what)") }
    }

    typealias Outcome = Result<Answer, Failure>

    /// A batch with every request answered or failed, its outcomes in the order of its requests.
    struct Finished: Equatable {
        var batch: Int
        var outcomes: [Outcome]
    }

    private struct Exchange {
        var batch: Int
        var index: Int
        var status: Int?
        var apnsId: String?
        var body = ByteBuffer()
    }

    private struct Batch {
        var outcomes: [Outcome?]
        var remaining: Int
    }

    private var nextStreamID: Int
    private var nextBatch = 0
    private var exchanges: [Int: Exchange] = [:]
    private var batches: [Int: Batch] = [:]
    /// Set by GOAWAY, the end of the connection or the last stream id: nothing new is opened on it.
    private(set) var isClosing = false

    /// - Parameter firstStreamID: the first stream id to open, odd (tests start near the last one).
    init(firstStreamID: Int = 1) {
        precondition(firstStreamID % 2 == 1, "a client opens odd stream ids")
        nextStreamID = firstStreamID
    }

    /// Requests waiting for an answer.
    var open: Int { exchanges.count }

    /// Whether `stream` still waits for its answer.
    func isOpen(_ stream: Int) -> Bool { exchanges[stream] != nil }

    /// Nothing new is opened; what is open may still be answered.
    mutating func drain() { isClosing = true }

    /// Opens a stream for each of `count` requests and returns the batch and the stream ids, in the
    /// requests' order; nil when the connection cannot take them (it is closing, or its stream ids would
    /// run out), so that the caller sends them on a new connection.
    mutating func open(_ count: Int) -> (batch: Int, streams: [Int])? {
        precondition(count > 0, "a batch has at least one request")
        guard !isClosing else { return nil }
        guard nextStreamID + 2 * (count - 1) <= Self.lastStreamID else {
            isClosing = true
            return nil
        }
        let batch = nextBatch
        nextBatch += 1
        var streams: [Int] = []
        streams.reserveCapacity(count)
        for index in 0..<count {
            exchanges[nextStreamID] = Exchange(batch: batch, index: index)
            streams.append(nextStreamID)
            nextStreamID += 2
        }
        batches[batch] = Batch(outcomes: Array(repeating: nil, count: count), remaining: count)
        return (batch, streams)
    }

    /// A HEADERS frame: the answer's head, or (a second block) its trailers.
    mutating func headers(_ fields: [(name: String, value: String)], endStream: Bool, on stream: Int) -> Finished? {
        guard let exchange = exchanges[stream] else { return nil }
        if exchange.status == nil {
            guard let text = fields.first(where: { $0.name == ":status" })?.value else {
                return end(stream, .failure(.malformed("has no :status")))
            }
            guard let status = Int(text), (100...599).contains(status) else {
                return end(stream, .failure(.malformed("has the status \(text.prefix(16))")))
            }
            // An informational head (1xx) is followed by the real one.
            guard status >= 200 else { return endStream ? end(stream, .failure(.malformed("ends at \(status)"))) : nil }
            exchanges[stream]!.status = status
            exchanges[stream]!.apnsId = fields.first { $0.name == "apns-id" }?.value
        }
        return endStream ? answered(stream) : nil
    }

    /// A DATA frame of the answer's body.
    mutating func data(_ bytes: ByteBuffer, endStream: Bool, on stream: Int) -> Finished? {
        guard let exchange = exchanges[stream] else { return nil }
        guard exchange.status != nil else { return end(stream, .failure(.malformed("sent a body before its head"))) }
        guard exchange.body.readableBytes + bytes.readableBytes <= Self.maximumAnswerBody else {
            return end(stream, .failure(.malformed("is larger than \(Self.maximumAnswerBody) bytes")))
        }
        var bytes = bytes
        exchanges[stream]!.body.writeBuffer(&bytes)  // in place: a copy would copy the body's storage too
        return endStream ? answered(stream) : nil
    }

    /// RST_STREAM from APNs, or a stream NIOHTTP2 ended for a protocol error.
    mutating func reset(_ stream: Int, code: String, unprocessed: Bool = false) -> Finished? {
        end(stream, .failure(.reset(code, unprocessed: unprocessed)))
    }

    /// The request's frames could not be written.
    mutating func notSent(_ stream: Int, because why: String) -> Finished? {
        end(stream, .failure(.notSent(why)))
    }

    /// GOAWAY: streams above `lastStreamID` were never taken, and are returned to be reset; those at or
    /// below it may still be answered.
    mutating func goAway(lastStreamID: Int, code: String) -> (finished: [Finished], streams: [Int]) {
        isClosing = true
        let refused = exchanges.keys.filter { $0 > lastStreamID }.sorted()
        return (refused.compactMap { end($0, .failure(.goingAway(code))) }, refused)
    }

    /// The batch's time is up: its unanswered requests fail, and their streams are returned to be reset.
    mutating func expire(_ batch: Int, seconds: Int) -> (finished: Finished?, streams: [Int]) {
        let streams = exchanges.filter { $0.value.batch == batch }.keys.sorted()
        var finished: Finished?
        for stream in streams { finished = end(stream, .failure(.timedOut(seconds: seconds))) ?? finished }
        return (finished, streams)
    }

    /// The connection ended (`why`, when an error ended it): every open request fails.
    mutating func close(because why: String? = nil) -> [Finished] {
        isClosing = true
        return exchanges.keys.sorted().compactMap { end($0, .failure(.connectionClosed(why))) }
    }

    private mutating func answered(_ stream: Int) -> Finished? {
        guard let exchange = exchanges[stream], let status = exchange.status else {
            return end(stream, .failure(.malformed("ended without a head")))
        }
        return end(stream, .success(Answer(status: status, apnsId: exchange.apnsId, body: exchange.body)))
    }

    private mutating func end(_ stream: Int, _ outcome: Outcome) -> Finished? {
        guard let exchange = exchanges.removeValue(forKey: stream), batches[exchange.batch] != nil else { return nil }
        // Changed in place: a batch's outcomes are not copied for each answer.
        batches[exchange.batch]!.outcomes[exchange.index] = outcome
        batches[exchange.batch]!.remaining -= 1
        guard batches[exchange.batch]!.remaining == 0, let batch = batches.removeValue(forKey: exchange.batch) else {
            return nil
        }
        return Finished(batch: exchange.batch, outcomes: batch.outcomes.map { $0! })
    }
}
