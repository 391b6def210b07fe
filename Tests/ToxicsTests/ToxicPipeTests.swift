import Foundation
import Testing
import Toxics

/// Each toxic's rule, decided by the pipe: a row per case, on instants given (no clock, no sockets).
struct ToxicPipeTests {
    static let start = ContinuousClock.now

    static func at(_ milliseconds: Double) -> ContinuousClock.Instant {
        start + .microseconds(Int64(milliseconds * 1000))
    }

    static func pipe(_ toxics: [Toxic], seed: UInt64 = 1) -> ToxicPipe {
        ToxicPipe(toxics: toxics, seed: seed, at: start)
    }

    @Test func noToxicPassesThrough() {
        var pipe = Self.pipe([])
        #expect(pipe.isPassThrough)
        #expect(pipe.receive(100, at: Self.at(5)) == [.write(100, at: Self.at(5))])
        #expect(pipe.end(at: Self.at(6)) == [.end(at: Self.at(6))])
    }

    @Test func latencyHoldsEachChunkAndKeepsTheirOrder() {
        var pipe = Self.pipe([Toxic(kind: .latency, attributes: ["latency": 100])])
        #expect(!pipe.isPassThrough)
        #expect(pipe.receive(10, at: Self.at(0)) == [.write(10, at: Self.at(100))])
        #expect(pipe.receive(10, at: Self.at(30)) == [.write(10, at: Self.at(130))])
        // The end is not delayed, but never comes before the data.
        #expect(pipe.end(at: Self.at(40)) == [.end(at: Self.at(130))])
    }

    @Test func jitterStaysWithinItsRangeAndRepeatsWithTheSeed() throws {
        let toxic = Toxic(kind: .latency, attributes: ["latency": 100, "jitter": 20])
        var first = Self.pipe([toxic], seed: 7)
        var second = Self.pipe([toxic], seed: 7)
        for index in 0..<50 {
            let time = Double(index) * 1000
            let steps = first.receive(1, at: Self.at(time))
            #expect(steps == second.receive(1, at: Self.at(time)))
            let first = try #require(steps.first)
            guard case .write(_, let when) = first else {
                Issue.record("a chunk under latency is written, not \(first)")
                return
            }
            let delay = (when - Self.at(time)) / .milliseconds(1)
            #expect(delay >= 80 && delay < 120, "\(delay)")
        }
    }

    @Test func bandwidthSpreadsTheBytesAtTheRate() {
        // 10 KB/s = 10 bytes a millisecond; pieces of at most 100 ms (1000 bytes).
        var pipe = Self.pipe([Toxic(kind: .bandwidth, attributes: ["rate": 10])])
        #expect(
            pipe.receive(2500, at: Self.at(0)) == [
                .write(1000, at: Self.at(100)), .write(1000, at: Self.at(200)), .write(500, at: Self.at(250)),
            ])
        // The next chunk waits for the first to be through.
        #expect(pipe.receive(100, at: Self.at(10)) == [.write(100, at: Self.at(260))])
        #expect(pipe.receive(100, at: Self.at(1000)) == [.write(100, at: Self.at(1010))])
    }

    @Test func limitDataCutsAtTheByteAndClosesAcrossChunks() {
        var pipe = Self.pipe([Toxic(kind: .limitData, attributes: ["bytes": 150])])
        #expect(pipe.receive(100, at: Self.at(0)) == [.write(100, at: Self.at(0))])
        #expect(
            pipe.receive(100, at: Self.at(1)) == [.write(50, at: Self.at(1)), .close(.fin, at: Self.at(1)), .drop(50)])
        #expect(pipe.receive(10, at: Self.at(2)) == [.drop(10)])
        #expect(pipe.finished)
    }

    @Test func resetPeerResetsAtTheFirstDataAfterItsTimeout() {
        var pipe = Self.pipe([Toxic(kind: .resetPeer, attributes: ["timeout": 50])])
        #expect(pipe.receive(10, at: Self.at(5)) == [.close(.reset, at: Self.at(55)), .drop(10)])
        var immediate = Self.pipe([Toxic(kind: .resetPeer)])
        #expect(immediate.end(at: Self.at(5)) == [.close(.reset, at: Self.at(5))])
    }

    @Test func timeoutDropsEverythingAndClosesAfterSilence() {
        var pipe = Self.pipe([Toxic(kind: .timeout, attributes: ["timeout": 100])])
        #expect(pipe.deadline == Self.at(100))
        #expect(pipe.receive(10, at: Self.at(40)) == [.drop(10)])
        #expect(pipe.deadline == Self.at(140))
        #expect(pipe.expire(at: Self.at(139)) == [])
        #expect(pipe.expire(at: Self.at(140)) == [.close(.fin, at: Self.at(140))])
        // 0: a black hole until the toxic is removed, which closes the connection.
        var hole = Self.pipe([Toxic(kind: .timeout)])
        #expect(hole.deadline == nil)
        #expect(hole.receive(10, at: Self.at(1)) == [.drop(10)])
        #expect(hole.update(toxics: [], at: Self.at(2)) == [.close(.fin, at: Self.at(2))])
    }

    @Test func slowCloseHoldsTheEnd() {
        var pipe = Self.pipe([Toxic(kind: .slowClose, attributes: ["delay": 300])])
        #expect(pipe.receive(10, at: Self.at(0)) == [.write(10, at: Self.at(0))])
        #expect(pipe.end(at: Self.at(10)) == [.end(at: Self.at(310))])
    }

    @Test func slicerCutsIntoPiecesApart() {
        var pipe = Self.pipe([
            Toxic(kind: .slicer, attributes: ["average_size": 100, "size_variation": 0, "delay": 1000])
        ])
        let steps = pipe.receive(400, at: Self.at(0))
        #expect(
            steps == [
                .write(100, at: Self.at(0)), .write(100, at: Self.at(1)), .write(100, at: Self.at(2)),
                .write(100, at: Self.at(3)),
            ])
        var varied = Self.pipe([
            Toxic(kind: .slicer, attributes: ["average_size": 50, "size_variation": 20, "delay": 0])
        ])
        let sizes = varied.receive(1000, at: Self.at(0)).compactMap { step -> Int? in
            if case .write(let count, _) = step { return count }
            return nil
        }
        #expect(sizes.reduce(0, +) == 1000)
        #expect(sizes.allSatisfy { $0 > 0 && $0 <= 70 }, "\(sizes)")
    }

    @Test func toxicityZeroNeverActsAndOneAlwaysDoes() {
        for seed in UInt64(0)..<20 {
            #expect(
                Self.pipe([Toxic(kind: .latency, toxicity: 0, attributes: ["latency": 100])], seed: seed).isPassThrough)
            #expect(
                !Self.pipe([Toxic(kind: .latency, toxicity: 1, attributes: ["latency": 100])], seed: seed).isPassThrough
            )
        }
        let half = (UInt64(0)..<1000).filter {
            !Self.pipe([Toxic(kind: .latency, toxicity: 0.5, attributes: ["latency": 1])], seed: $0).isPassThrough
        }
        #expect(half.count > 400 && half.count < 600, "\(half.count) of 1000")
    }

    @Test func toxicsChainInTheOrderTheyWereAdded() {
        var pipe = Self.pipe([
            Toxic(kind: .latency, attributes: ["latency": 100]), Toxic(kind: .bandwidth, attributes: ["rate": 1]),
        ])
        // 100 ms late, then 1 byte a millisecond.
        #expect(pipe.receive(50, at: Self.at(0)) == [.write(50, at: Self.at(150))])
    }

    @Test func anUpdatedLimitKeepsItsCount() {
        var pipe = Self.pipe([Toxic(kind: .limitData, attributes: ["bytes": 100])])
        #expect(pipe.receive(60, at: Self.at(0)) == [.write(60, at: Self.at(0))])
        #expect(pipe.update(toxics: [Toxic(kind: .limitData, attributes: ["bytes": 80])], at: Self.at(1)) == [])
        #expect(
            pipe.receive(60, at: Self.at(2)) == [.write(20, at: Self.at(2)), .close(.fin, at: Self.at(2)), .drop(40)])
    }

    @Test func removingAToxicRestoresTheLink() {
        var pipe = Self.pipe([Toxic(kind: .latency, attributes: ["latency": 100])])
        #expect(pipe.update(toxics: [], at: Self.at(1)) == [])
        #expect(pipe.isPassThrough)
        #expect(pipe.receive(5, at: Self.at(2)) == [.write(5, at: Self.at(2))])
    }

    @Test func aBandwidthToxicNeedsARateAndAStreamGivenMustBeOne() {
        #expect(
            throws: ToxiproxyError(
                "bad request body: attributes.rate of a bandwidth toxic must be from 1 to 10000000, not 0", status: 400)
        ) {
            try Toxic.decoding(Data("{\"type\":\"bandwidth\"}".utf8))
        }
        #expect(throws: ToxiproxyError("stream was invalid, can be either upstream or downstream", status: 400)) {
            try Toxic.decoding(Data("{\"type\":\"latency\",\"stream\":\"\"}".utf8))
        }
        #expect(
            throws: ToxiproxyError("bad request body: attributes.latency must be a whole number, not 1.5", status: 400)
        ) {
            try Toxic.decoding(Data("{\"type\":\"latency\",\"attributes\":{\"latency\":1.5}}".utf8))
        }
        // Keys match whatever their case, and unknown ones are ignored, as Go's decoder does.
        #expect(
            (try? Toxic.decoding(
                Data("{\"Type\":\"latency\",\"STREAM\":\"upstream\",\"Attributes\":{\"Latency\":5,\"x\":1}}".utf8)))
                == Toxic(kind: .latency, stream: .upstream, attributes: ["latency": 5]))
    }

    @Test func lossHoldsALostSegmentAndEverythingBehindItUntilItIsSentAgain() {
        // Every segment lost once at most would need a draw; a chance of 0 never loses one.
        var clean = Self.pipe([Toxic(kind: .loss, attributes: ["per_million": 0])])
        #expect(clean.receive(5000, at: Self.at(1)) == [.write(5000, at: Self.at(1))])
        // Half the segments lost: the 10 segments of 14,480 bytes come out in order, the bytes before a
        // lost segment at once, the rest a retransmission wait (or several) later; all of them in the end.
        var lossy = Self.pipe([Toxic(kind: .loss, attributes: ["per_million": 500_000, "retransmit": 100])], seed: 3)
        let steps = lossy.receive(14_480, at: Self.at(0))
        var total = 0
        var last = Self.at(0)
        for step in steps {
            guard case .write(let count, let when) = step else {
                Issue.record("loss writes late, never drops: \(step)")
                continue
            }
            total += count
            #expect(when >= last)
            // Each wait is 100 ms, doubled while lost again: every time is a sum of such waits.
            #expect(((when - Self.at(0)) / .milliseconds(1)).truncatingRemainder(dividingBy: 100) == 0)
            last = when
        }
        #expect(total == 14_480)
        #expect(steps.count > 1, "at one chance in two, some of 10 segments are lost: \(steps)")
        // The next bytes wait behind the last retransmission.
        #expect(
            lossy.receive(1, at: Self.at(1)).first.map {
                if case .write(_, let when) = $0 { when >= last } else { false }
            } == true)
    }

    @Test func fullLossHoldsEverythingUntilTheToxicsChange() {
        var pipe = Self.pipe([Toxic(kind: .loss, attributes: ["per_million": 1_000_000])])
        // Held: neither written nor dropped (the proxy keeps the bytes), and the end with them.
        #expect(pipe.receive(100, at: Self.at(0)) == [])
        #expect(pipe.end(at: Self.at(1)) == [])
        #expect(!pipe.finished)
        // The loss goes: what was held goes through the new toxics from then on.
        #expect(pipe.update(toxics: [Toxic(kind: .latency, attributes: ["latency": 50])], at: Self.at(10)) == [])
        pipe.requeue(passed: 0, held: 100, at: Self.at(10))
        #expect(pipe.receive(100, at: Self.at(10)) == [.write(100, at: Self.at(60))])
        #expect(pipe.end(at: Self.at(10)) == [.end(at: Self.at(60))])
    }

    @Test func requeuedBytesStartTheNewScheduleAndLimitDataTakesThemBack() {
        // 10 KB/s: 2000 bytes are scheduled over 200 ms; at 50 ms the rate becomes 100 KB/s.
        var pipe = Self.pipe([Toxic(name: "bw", kind: .bandwidth, attributes: ["rate": 10])])
        #expect(pipe.receive(2000, at: Self.at(0)) == [.write(1000, at: Self.at(100)), .write(1000, at: Self.at(200))])
        #expect(
            pipe.update(toxics: [Toxic(name: "bw", kind: .bandwidth, attributes: ["rate": 100])], at: Self.at(50)) == []
        )
        pipe.requeue(passed: 2000, held: 0, at: Self.at(50))
        #expect(pipe.receive(2000, at: Self.at(50)) == [.write(2000, at: Self.at(70))])
        // limit_data counted bytes that were never written: requeued, they count once.
        var limited = Self.pipe([
            Toxic(name: "cap", kind: .limitData, attributes: ["bytes": 150]),
            Toxic(name: "slow", kind: .latency, attributes: ["latency": 1000]),
        ])
        #expect(limited.receive(100, at: Self.at(0)) == [.write(100, at: Self.at(1000))])
        let kept = [Toxic(name: "cap", kind: .limitData, attributes: ["bytes": 150])]
        #expect(limited.update(toxics: kept, at: Self.at(10)) == [])
        limited.requeue(passed: 100, held: 0, at: Self.at(10))
        #expect(limited.receive(100, at: Self.at(10)) == [.write(100, at: Self.at(10))])
        #expect(
            limited.receive(100, at: Self.at(11)) == [
                .write(50, at: Self.at(11)), .close(.fin, at: Self.at(11)), .drop(50),
            ])
    }

    @Test func lossRetransmissionWaitDoublesAndDefaultsTo200Milliseconds() {
        // With a chance of 99 %, the first segment is lost many times: waits 200, 400, 800…
        var pipe = Self.pipe([Toxic(kind: .loss, attributes: ["per_million": 990_000])], seed: 5)
        guard case .write(1448, let when)? = pipe.receive(1448, at: Self.at(0)).first else {
            Issue.record("a lost segment is written late")
            return
        }
        let waited = ((when - Self.at(0)) / .milliseconds(1)).rounded()
        // 200 · (2^k − 1) for k losses, capped at a minute a wait: at least 200 + 400 + … here, and
        // at most 15 retransmissions (Linux's tcp_retries2): 102,200 ms doubling, then 6 of a minute.
        #expect(waited >= 200 + 400 + 800 + 1600)
        #expect(waited <= 102_200 + 6 * 60_000)
        var sum = 0.0
        var wait = 200.0
        while sum < waited {
            sum += wait
            wait = min(wait * 2, 60_000)
        }
        #expect(sum == waited, "\(waited) ms is not a sum of doubling waits from 200 ms")
    }

    @Test func dnsDelayHoldsOnlyTheFirstBytes() {
        var pipe = Self.pipe([Toxic(kind: .dnsDelay, stream: .upstream, attributes: ["delay": 3000])])
        #expect(pipe.receive(10, at: Self.at(5)) == [.write(10, at: Self.at(3005))])
        // Later bytes are not held again, but never overtake the first.
        #expect(pipe.receive(10, at: Self.at(10)) == [.write(10, at: Self.at(3005))])
        #expect(pipe.receive(10, at: Self.at(4000)) == [.write(10, at: Self.at(4000))])
    }

    @Test func lossChanceIsAMillionAtMost() {
        #expect(
            throws: ToxiproxyError(
                "bad request body: attributes.per_million of a loss toxic must be from 0 to 1000000, not 1000001",
                status: 400)
        ) {
            try Toxic.decoding(Data("{\"type\":\"loss\",\"attributes\":{\"per_million\":1000001}}".utf8))
        }
    }
}
