import NIOCore
import Testing

@testable import FakeParse

/// The provider's streams to APNs, frame by frame, without a socket: a row per rule.
@Suite struct APNsStreamsTests {
    typealias Failure = APNsStreams.Failure

    /// `#require` for what a mutating call returns (the macro cannot take the call itself).
    func required<T>(_ value: T?, sourceLocation: SourceLocation = #_sourceLocation) throws -> T {
        try #require(value, sourceLocation: sourceLocation)
    }

    func answer(_ status: Int, _ apnsId: String?, _ body: String = "") -> APNsStreams.Outcome {
        .success(APNsStreams.Answer(status: status, apnsId: apnsId, body: ByteBuffer(string: body)))
    }

    @Test func aBatchTakesConsecutiveOddStreamsAndFinishesWithItsLastAnswerInItsOwnOrder() throws {
        var streams = APNsStreams()
        let first = try required(streams.open(3))
        let second = try required(streams.open(1))
        #expect(first.streams == [1, 3, 5])
        #expect(second.streams == [7])
        #expect(first.batch != second.batch)
        #expect(streams.open == 4)

        // Answers arrive in any order; the batch ends with the last and keeps the requests' order.
        #expect(streams.headers([(":status", "200"), ("apns-id", "B")], endStream: true, on: 3) == nil)
        #expect(streams.headers([(":status", "410"), ("apns-id", "C")], endStream: false, on: 5) == nil)
        #expect(streams.data(ByteBuffer(string: #"{"reason":"#), endStream: false, on: 5) == nil)
        #expect(streams.data(ByteBuffer(string: #""Unregistered"}"#), endStream: true, on: 5) == nil)
        let done = streams.headers([(":status", "200"), ("apns-id", "A")], endStream: true, on: 1)
        #expect(
            done
                == APNsStreams.Finished(
                    batch: first.batch,
                    outcomes: [answer(200, "A"), answer(200, "B"), answer(410, "C", #"{"reason":"Unregistered"}"#)]))
        #expect(streams.open == 1)
    }

    @Test func trailersEndAnAnswerAndAnInformationalHeadIsSkipped() throws {
        var streams = APNsStreams()
        let batch = try required(streams.open(2))
        #expect(streams.headers([(":status", "100")], endStream: false, on: 1) == nil)
        #expect(streams.headers([(":status", "400")], endStream: false, on: 1) == nil)
        #expect(streams.data(ByteBuffer(string: "{}"), endStream: false, on: 1) == nil)
        #expect(streams.headers([("x-trailer", "1")], endStream: true, on: 1) == nil)
        let done = try required(streams.headers([(":status", "200")], endStream: true, on: 3))
        #expect(done.batch == batch.batch)
        #expect(done.outcomes == [answer(400, nil, "{}"), answer(200, nil)])
    }

    @Test(arguments: [
        ([(":status", "abc")], "APNs's answer has the status abc"),
        ([(":status", "700")], "APNs's answer has the status 700"),
        ([("apns-id", "x")], "APNs's answer has no :status"),
        ([(":status", "103")], "APNs's answer ends at 103"),
    ])
    func aHeadThatIsNoAnswerFailsItsRequest(fields: [(String, String)], message: String) throws {
        var streams = APNsStreams()
        _ = try required(streams.open(1))
        let done = try required(streams.headers(fields.map { (name: $0.0, value: $0.1) }, endStream: true, on: 1))
        #expect(done.outcomes == [.failure(Failure(description: message))])
    }

    @Test func aBodyBeforeItsHeadOrBeyond64KiBFailsItsRequest() throws {
        var streams = APNsStreams()
        _ = try required(streams.open(2))
        let early = streams.data(ByteBuffer(string: "x"), endStream: false, on: 1)
        #expect(early == nil)
        #expect(streams.headers([(":status", "400")], endStream: false, on: 3) == nil)
        let large = ByteBuffer(repeating: 0x20, count: APNsStreams.maximumAnswerBody + 1)
        let done = try required(streams.data(large, endStream: false, on: 3))
        #expect(
            done.outcomes == [
                .failure(Failure(description: "APNs's answer sent a body before its head")),
                .failure(Failure(description: "APNs's answer is larger than 16384 bytes")),
            ])
        // Frames for a stream that has ended change nothing.
        #expect(streams.data(ByteBuffer(string: "late"), endStream: true, on: 3) == nil)
        #expect(streams.open == 0)
    }

    @Test func aResetOrAWriteThatFailedEndsOnlyItsRequest() throws {
        var streams = APNsStreams()
        _ = try required(streams.open(3))
        #expect(streams.reset(1, code: "REFUSED_STREAM", unprocessed: true) == nil)
        #expect(streams.notSent(3, because: "no such stream") == nil)
        #expect(!streams.isOpen(3))
        #expect(streams.isOpen(5))
        let done = try required(streams.headers([(":status", "200")], endStream: true, on: 5))
        // Neither reached APNs's processing: both may be sent again.
        #expect(
            done.outcomes == [
                .failure(Failure(description: "APNs reset the stream (REFUSED_STREAM)", unprocessed: true)),
                .failure(
                    Failure(description: "the request could not be sent to APNs: no such stream", unprocessed: true)),
                answer(200, nil),
            ])
        var other = APNsStreams()
        _ = try required(other.open(1))
        let cancelled = try required(other.reset(1, code: "CANCEL"))
        #expect(cancelled.outcomes == [.failure(Failure(description: "APNs reset the stream (CANCEL)"))])
    }

    @Test func goAwayRefusesTheStreamsAboveItsLastOneAsUnprocessedAndTheRestMayFinish() throws {
        var streams = APNsStreams()
        let first = try required(streams.open(2))
        let second = try required(streams.open(2))
        let refused = streams.goAway(lastStreamID: 3, code: "NO_ERROR")
        let goingAway = Failure(
            description: "APNs closed the connection (GOAWAY NO_ERROR) before taking the request", unprocessed: true)
        #expect(
            refused.finished == [
                APNsStreams.Finished(batch: second.batch, outcomes: [.failure(goingAway), .failure(goingAway)])
            ])
        #expect(refused.streams == second.streams, "to be reset, so that NIOHTTP2 never opens them")
        #expect(streams.isClosing)
        #expect(streams.open(1) == nil)
        #expect(streams.headers([(":status", "200")], endStream: true, on: 1) == nil)
        let done = try required(streams.headers([(":status", "200")], endStream: true, on: 3))
        #expect(done.batch == first.batch)
        #expect(done.outcomes == [answer(200, nil), answer(200, nil)])
    }

    @Test func anExpiredBatchFailsWhatIsUnansweredAndNamesItsStreams() throws {
        var streams = APNsStreams()
        let slow = try required(streams.open(3))
        let other = try required(streams.open(1))
        #expect(streams.headers([(":status", "200")], endStream: true, on: 3) == nil)
        let (finished, expired) = streams.expire(slow.batch, seconds: 30)
        #expect(expired == [1, 5])
        let timedOut = Result<APNsStreams.Answer, Failure>.failure(
            Failure(description: "APNs did not answer within 30 s"))
        #expect(finished?.outcomes == [timedOut, answer(200, nil), timedOut])
        #expect(streams.open == 1)
        #expect(other.streams == [7])
    }

    @Test func theConnectionsEndFailsEveryOpenRequestWithWhatEndedIt() throws {
        var streams = APNsStreams()
        let first = try required(streams.open(1))
        let second = try required(streams.open(1))
        let closed = Failure(description: "the connection to APNs closed before it answered: handshake failed")
        #expect(
            streams.close(because: "handshake failed") == [
                APNsStreams.Finished(batch: first.batch, outcomes: [.failure(closed)]),
                APNsStreams.Finished(batch: second.batch, outcomes: [.failure(closed)]),
            ])
        #expect(streams.open(1) == nil)
    }

    @Test func aDrainedConnectionOpensNothingAndStillTakesAnswers() throws {
        var streams = APNsStreams()
        _ = try required(streams.open(1))
        streams.drain()
        #expect(streams.open(1) == nil)
        let done = try required(streams.headers([(":status", "200")], endStream: true, on: 1))
        #expect(done.outcomes == [answer(200, nil)])
    }

    @Test func aConnectionWhoseStreamIdsWouldRunOutTakesNothingMore() throws {
        var streams = APNsStreams(firstStreamID: APNsStreams.lastStreamID - 4)
        #expect(streams.open(4) == nil)
        #expect(streams.isClosing)
        var fresh = APNsStreams(firstStreamID: APNsStreams.lastStreamID - 4)
        #expect(
            fresh.open(3)?.streams == [
                APNsStreams.lastStreamID - 4, APNsStreams.lastStreamID - 2, APNsStreams.lastStreamID,
            ])
        #expect(fresh.open(1) == nil)
    }
}
