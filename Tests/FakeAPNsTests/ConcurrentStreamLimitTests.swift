import Testing

@testable import FakeAPNs

/// `SETTINGS_MAX_CONCURRENT_STREAMS` in force only once acknowledged, a row at a time.
@Suite struct ConcurrentStreamLimitTests {
    @Test func beforeAnyAcknowledgementNIOHTTP2sDefaultHolds() {
        var limit = ConcurrentStreamLimit()
        limit.sent(1)
        let opened = stride(from: Int32(1), through: 199, by: 2).map { limit.open($0) }
        let oneMore = limit.open(201)
        #expect(opened.count == 100 && opened.allSatisfy { $0 })
        #expect(!oneMore, "the 101st stream is over the default of 100")
        #expect(limit.lastAccepted == 199)
    }

    @Test func anAcknowledgedLimitHolds() {
        var limit = ConcurrentStreamLimit()
        limit.sent(1)
        limit.acknowledged()
        let first = limit.open(1)
        let second = limit.open(3)
        limit.closed(1)
        let afterClosing = limit.open(3)
        #expect(limit.inForce == 1)
        #expect(first && !second)
        #expect(afterClosing, "a closed stream makes room")
    }

    @Test func acknowledgementsApplyToTheFramesInTheOrderTheyWereSent() {
        var limit = ConcurrentStreamLimit()
        limit.sent(1)
        limit.sent(nil)
        limit.sent(1_000)
        limit.acknowledged()
        #expect(limit.inForce == 1)
        limit.acknowledged()
        #expect(limit.inForce == 1, "a SETTINGS frame without the limit leaves it")
        limit.acknowledged()
        #expect(limit.inForce == 1_000)
        limit.acknowledged()
        #expect(limit.inForce == 1_000, "an acknowledgement of nothing sent changes nothing")
    }
}
