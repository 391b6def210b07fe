import Foundation
import Testing

@testable import FakeAPNs

@Suite struct NotificationLogTests {
    func request(token: String, authorization: String = "bearer eyJ.secret.token") -> ProviderRequest {
        ProviderRequest(
            headers: [(":method", "POST"), (":path", "/3/device/\(token)"), ("authorization", authorization)],
            body: Data(#"{"aps":{}}"#.utf8))
    }

    func notification(_ apnsId: String, token: String) -> AcceptedNotification {
        AcceptedNotification(
            apnsId: apnsId, deviceToken: token, topic: "com.example.app", pushType: "alert", priority: 10,
            expiration: nil, collapseId: nil, payload: #"{"aps":{}}"#)
    }

    @Test func aLimitedLogKeepsTheNewestEntriesAndCountsTheRest() {
        let log = NotificationLog(retention: 10)
        for index in 0..<100 {
            log.append(request(token: "aa\(index)"), apnsId: "ID-\(index)", outcome: .failure(.badDeviceToken))
        }
        let kept = log.entries()
        #expect(kept.count == 10)
        #expect(log.forgottenCount == 90)
        #expect(kept.last?.apnsId == "ID-99")
        #expect(kept.map(\.apnsId) == (100 - kept.count..<100).map { "ID-\($0)" })
    }

    @Test func aStoredNotificationIsStillUpdatedAfterOlderEntriesWereForgotten() {
        let log = NotificationLog(retention: 4)
        let token = String(repeating: "ab", count: 32)
        let stored = notification("STORED", token: token)
        log.append(request(token: token), apnsId: "STORED", outcome: .success(stored), fate: .init(decision: .stored))
        for index in 0..<7 {
            log.append(request(token: "cd\(index)"), apnsId: "ID-\(index)", outcome: .failure(.badDeviceToken))
        }
        // Seven more entries went past the retention of four, so the stored one was forgotten; a later
        // decision about it must not land on another entry.
        log.update("STORED", to: .init(decision: .delivered, deliveredAt: Date()))
        #expect(log.entries().allSatisfy { $0.decision == "rejected" })
        // A notification stored after the trim is found and updated where it now is.
        let later = notification("LATER", token: token)
        log.append(request(token: token), apnsId: "LATER", outcome: .success(later), fate: .init(decision: .stored))
        log.update("LATER", to: .init(decision: .delivered, deliveredAt: Date()))
        #expect(log.entries(deviceToken: token).last?.decision == "delivered")
    }

    @Test func aBudgetedLogKeepsItsNewestEntriesWithinTheBudget() {
        let one = NotificationLog.estimatedBytes(headers: request(token: "aa10").headers, body: request(token: "").body)
        let log = NotificationLog(retention: 100_000, budget: 40 * one)
        for index in 10..<1_000 {
            log.append(request(token: "aa\(index)"), apnsId: "ID-\(index)", outcome: .failure(.badDeviceToken))
        }
        let kept = log.entries()
        // The newest entries (tokens of five characters, a byte over `one`) are kept as far as the
        // budget goes: 39 of them.
        #expect(kept.count == 39)
        #expect(log.forgottenCount == 990 - 39)
        #expect(kept.map(\.apnsId) == (1_000 - kept.count..<1_000).map { "ID-\($0)" })
    }

    @Test func theProviderTokenIsNeverShown() {
        let log = NotificationLog()
        let token = String(repeating: "ab", count: 32)
        var twice = request(token: token)
        twice.headers.append(("authorization", "bearer second.secret.token"))
        log.append(twice, apnsId: "REJECTED", outcome: .failure(.badDeviceToken))
        log.append(request(token: token), apnsId: "ACCEPTED", outcome: .success(notification("ACCEPTED", token: token)))
        let shown = log.entries().map { $0.headers["authorization"] }
        #expect(shown == ["bearer <redacted>", "bearer <redacted>"])
    }

    @Test func anAcceptedPushsPayloadCountsAgainstTheBudget() {
        let token = String(repeating: "ab", count: 32)
        var big = request(token: token)
        big.body = Data(repeating: UInt8(ascii: "x"), count: 4_000)
        let one = NotificationLog.estimatedBytes(headers: big.headers, body: big.body)
        #expect(one > 4_000)
        let log = NotificationLog(retention: 100_000, budget: 20 * one)
        for index in 0..<100 {
            let accepted = notification("ID-\(index)", token: token)
            log.append(big, apnsId: "ID-\(index)", outcome: .success(accepted), fate: .init(decision: .delivered))
        }
        #expect(log.entries().count == 20)
    }

    @Test func decisionsAboutForgottenEntriesAreForgottenToo() {
        let log = NotificationLog(retention: 10)
        let token = String(repeating: "ab", count: 32)
        for index in 0..<1_000 {
            log.append(request(token: "cd\(index)"), apnsId: "ID-\(index)", outcome: .failure(.badDeviceToken))
            // A stored notification delivered long after its entry went.
            log.update("GONE-\(index)", to: .init(decision: .delivered, deliveredAt: Date()))
        }
        #expect(log.waitingDecisions <= 20)
        // One that races ahead of its entry still finds it.
        log.update("LATE", to: .init(decision: .delivered, deliveredAt: Date()))
        log.append(
            request(token: token), apnsId: "LATE", outcome: .success(notification("LATE", token: token)),
            fate: .init(decision: .stored))
        #expect(log.entries(deviceToken: token).last?.decision == "delivered")
    }
}
