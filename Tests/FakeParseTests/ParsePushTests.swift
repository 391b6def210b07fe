import FakeAPNs
import FakeParse
import Foundation
import HarnessTimeline
import TestSupport
import Testing

/// Pushes through FakeParse to a real FakeAPNs: each device's outcome and the `_PushStatus` counts for a
/// mix of good, unregistered, malformed and unsendable installations; the token clean-up; badges;
/// `push_time` (not before, and across a restart) and expiry.
@Suite struct ParsePushTests: ParseServing {
    let topic = "com.razeware.NASA-TV"

    func install(_ services: ParseServices, _ id: String, token: String, type: String = "ios", badge: Int? = nil)
        async throws
    {
        let badgeField = badge.map { #","badge":\#($0)"# } ?? ""
        let saved = try await curl(
            services, "POST", "/installations",
            body:
                #"{"deviceType":"\#(type)","installationId":"\#(id)","deviceToken":"\#(token)","appIdentifier":"\#(topic)"\#(badgeField)}"#
        )
        #expect(saved.status == 201, "\(saved.body)")
    }

    /// `_PushStatus` once FakeParse has published its final status for `id`.
    func finalStatus(_ services: ParseServices, _ id: String) async throws -> [String: Any] {
        _ = try await services.timeline.waitFor("the push's final status", timeout: .seconds(30)) {
            $0.kind == .parsePushStatus && $0.attributes["pushStatusId"] == id
        }
        return try await curl(services, "GET", "/classes/_PushStatus/\(id)", master: true).json
    }

    func pushStatusId(_ answer: (status: Int, json: [String: Any], headers: String, body: String)) throws -> String {
        let line = answer.headers.split(separator: "\r\n").first {
            $0.lowercased().hasPrefix("x-parse-push-status-id:")
        }
        return try #require(line.map { $0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces) }, "\(answer)")
    }

    /// A write SQLite refuses once the client has its answer is on the timeline, never dropped in
    /// silence: a trigger of the test's own refuses the push's outcomes; the status is still saved.
    @Test func aWriteTheDatabaseRefusesAfterTheAnswerIsPublished() async throws {
        let services = try await start()
        let good = services.apns.gateway.register(topic: topic)
        try await install(services, "good", token: good)
        let refuse = try await ChildProcess.run(
            "python3",
            [
                "-c",
                "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\n"
                    + "c.execute(\"CREATE TRIGGER refuse BEFORE INSERT ON pushOutcome "
                    + "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END\")\nc.commit()",
                services.directory.appendingPathComponent("parse.sqlite").path,
            ])
        #expect(refuse.status == 0, "\(refuse.transcript)")
        let push = try await curl(
            services, "POST", "/push", master: true, body: #"{"where":{},"data":{"alert":"Nebula"}}"#)
        let id = try pushStatusId(push)
        let status = try await finalStatus(services, id)
        await services.close()

        #expect(push.status == 200)
        let refused = services.timeline.events.filter { $0.kind == .parseStoreFailed }
        #expect(refused.count == 1, "\(refused)")
        #expect(refused.first?.attributes["pushStatusId"] == id)
        #expect(refused.first?.attributes["what"] == "the batch's 1 outcomes")
        #expect(refused.first?.attributes["error"]?.contains("refused by the test") == true, "\(refused)")
        #expect(status["status"] as? String == "succeeded")
        #expect(status["numSent"] as? Int == 1)
    }

    @Test(arguments: [false, true])
    func eachDeviceIsCountedAndKeptWithWhatAPNsAnswered(cleanup: Bool) async throws {
        let services = try await start(cleanupInvalidInstallations: cleanup)
        let good = services.apns.gateway.register(topic: topic)
        let gone = services.apns.gateway.register(topic: topic)
        _ = services.apns.gateway.unregister(gone)
        let malformed = String(repeating: "0f", count: 31)
        try await install(services, "good", token: good)
        try await install(services, "gone", token: gone)
        try await install(services, "malformed", token: malformed)
        try await install(services, "android", token: "fcm-token", type: "android")
        let push = try await curl(
            services, "POST", "/push", master: true, body: #"{"where":{},"data":{"alert":"Nebula"}}"#)
        let id = try pushStatusId(push)
        let status = try await finalStatus(services, id)
        let outcomes = try await curl(
            services, "GET", "/classes/_PushOutcome?where=%7B%22pushStatusId%22%3A%22\(id)%22%7D&order=deviceToken",
            master: true)
        let installations = try await curl(services, "GET", "/installations?order=installationId", master: true)
        await services.close()

        #expect(push.status == 200)
        #expect(status["status"] as? String == "succeeded")
        #expect(status["numSent"] as? Int == 1)
        #expect(status["numFailed"] as? Int == 3)
        #expect(status["sentPerType"] as? [String: Int] == ["ios": 1])
        #expect(status["failedPerType"] as? [String: Int] == ["ios": 2, "android": 1])
        #expect(status["count"] == nil)
        let rows = try #require(outcomes.json["results"] as? [[String: Any]])
        let byToken = Dictionary(uniqueKeysWithValues: rows.map { ($0["deviceToken"] as? String ?? "", $0) })
        #expect(byToken[good]?["status"] as? Int == 200)
        #expect(byToken[good]?["transmitted"] as? Bool == true)
        #expect((byToken[good]?["apnsId"] as? String)?.isEmpty == false)
        #expect(byToken[gone]?["status"] as? Int == 410)
        #expect(byToken[gone]?["reason"] as? String == "Unregistered")
        #expect(byToken[malformed]?["status"] as? Int == 400)
        #expect(byToken[malformed]?["reason"] as? String == "BadDeviceToken")
        #expect(byToken["fcm-token"]?["error"] as? String == "Can not find sender for push type android")
        let tokens = (installations.json["results"] as? [[String: Any]] ?? []).map { $0["deviceToken"] as? String }
        // Ordered by installationId: android, gone, good, malformed.
        #expect(tokens == (cleanup ? ["fcm-token", nil, good, nil] : ["fcm-token", gone, good, malformed]))
    }

    @Test func anIncrementPushRaisesEachBadgeAndSendsIt() async throws {
        let services = try await start()
        let delivered = AsyncStream.makeStream(of: AcceptedNotification.self)
        let token = services.apns.gateway.register(topic: topic) { delivered.continuation.yield($0) }
        try await install(services, "i-1", token: token, badge: 3)
        let push = try await curl(
            services, "POST", "/push", master: true,
            body: #"{"channels":["a"],"where":{},"data":{"badge":"Increment"}}"#)
        let second = try await curl(
            services, "POST", "/push", master: true,
            body: #"{"where":{"deviceType":"ios"},"data":{"badge":"Increment","alert":"x"}}"#)
        let id = try pushStatusId(second)
        _ = try await finalStatus(services, id)
        let stream = delivered.stream
        let notification = try #require(
            try await withDeadline(.seconds(30), "delivery") { await stream.first { _ in true } })
        let stored = try await curl(services, "GET", "/installations", master: true)
        await services.close()
        #expect(push.status == 400, "channels and where together: \(push.body)")
        let payload = try JSONSerialization.jsonObject(with: Data(notification.payload.utf8)) as? [String: Any]
        #expect((payload?["aps"] as? [String: Any])?["badge"] as? Int == 4)
        #expect((stored.json["results"] as? [[String: Any]])?.first?["badge"] as? Int == 4)
    }

    @Test func aScheduledPushGoesOutAtItsTimeNotBefore() async throws {
        let services = try await start()
        let delivered = AsyncStream.makeStream(of: AcceptedNotification.self)
        let token = services.apns.gateway.register(topic: topic) { delivered.continuation.yield($0) }
        try await install(services, "i-1", token: token)
        let due = Int(Date().timeIntervalSince1970) + 3
        let push = try await curl(
            services, "POST", "/push", master: true,
            body: #"{"where":{"deviceType":"ios"},"push_time":\#(due),"data":{"alert":"later"}}"#)
        let id = try pushStatusId(push)
        let scheduled = try await curl(services, "GET", "/classes/_PushStatus/\(id)", master: true)
        let stream = delivered.stream
        _ = try #require(try await withDeadline(.seconds(30), "delivery") { await stream.first { _ in true } })
        let deliveredAt = Date().timeIntervalSince1970
        let status = try await finalStatus(services, id)
        await services.close()
        #expect(push.status == 200)
        // A busy machine can make the GET late, never the push early.
        #expect(["scheduled", "running", "succeeded"].contains(scheduled.json["status"] as? String))
        #expect(deliveredAt >= Double(due), "delivered \(Double(due) - deliveredAt) s before its push_time")
        #expect(status["status"] as? String == "succeeded")
        #expect(status["numSent"] as? Int == 1)
    }

    /// A push scheduled an hour ahead is still scheduled after a restart: the new server takes it up
    /// (and says so on the timeline) without waiting for its time.
    @Test func aScheduledPushIsTakenUpAgainAfterARestart() async throws {
        let first = try await start()
        let token = first.apns.gateway.register(topic: topic)
        try await install(first, "i-1", token: token)
        let due = Int(Date().timeIntervalSince1970) + 3_600
        let push = try await curl(
            first, "POST", "/push", master: true,
            body: #"{"where":{"deviceType":"ios"},"push_time":\#(due),"data":{"alert":"in an hour"}}"#)
        let id = try pushStatusId(push)
        await first.parse.close()
        let timeline = Timeline()
        let second = try await start(directory: first.directory, apns: first.apns, timeline: timeline)
        let resumed = try await timeline.waitFor("the push scheduled again", timeout: .seconds(30)) {
            $0.kind == .parsePushScheduled && $0.attributes["pushStatusId"] == id
        }
        let status = try await curl(second, "GET", "/classes/_PushStatus/\(id)", master: true)
        await second.close()
        #expect(push.status == 200)
        #expect(resumed.attributes["pushTime"] == status.json["pushTime"] as? String)
        #expect(status.json["status"] as? String == "scheduled")
        #expect(timeline.events.filter { $0.kind == .parsePushSent }.isEmpty)
    }

    @Test func aPushThatExpiresBeforeItsTimeIsNeverSent() async throws {
        let services = try await start()
        let token = services.apns.gateway.register(topic: topic)
        try await install(services, "i-1", token: token)
        let now = Int(Date().timeIntervalSince1970)
        let push = try await curl(
            services, "POST", "/push", master: true,
            body: #"{"where":{},"push_time":\#(now + 2),"expiration_time":\#(now + 1),"data":{"alert":"stale"}}"#)
        let status = try await finalStatus(services, try pushStatusId(push))
        let sent = services.timeline.events.filter { $0.kind == .parsePushSent || $0.kind == .apnsAccepted }
        await services.close()
        #expect(status["status"] as? String == "failed")
        #expect(
            ((status["errorMessage"] as? [String: Any])?["message"] as? String)?.hasPrefix("The push expired at")
                == true)
        #expect(sent.isEmpty)
    }

    /// FakeAPNs ends an idle provider connection with GOAWAY, as APNs does; the next push opens a new one.
    @Test func aConnectionAPNsClosedIsOpenedAgainForTheNextPush() async throws {
        let directory = try PackagePaths.temporaryDirectory()
        var configuration = FakeAPNsConfiguration(credentialsDirectory: directory.appendingPathComponent("apns"))
        configuration.port = 0
        // Long enough that a new connection is never idle before its first batch, even on a busy machine.
        configuration.idleTimeout = .seconds(2)
        let timeline = Timeline()
        let apns = try await FakeAPNsServer.start(configuration: configuration, timeline: timeline)
        let services = try await start(directory: directory, apns: apns, timeline: timeline)
        let token = services.apns.gateway.register(topic: topic)
        try await install(services, "i-1", token: token)
        let first = try await finalStatus(
            services,
            try pushStatusId(
                try await curl(services, "POST", "/push", master: true, body: #"{"where":{},"data":{"alert":"one"}}"#)))
        await services.apns.waitUntilNoConnectionIsOpen()
        let second = try await finalStatus(
            services,
            try pushStatusId(
                try await curl(services, "POST", "/push", master: true, body: #"{"where":{},"data":{"alert":"two"}}"#)))
        let accepted = services.timeline.events.filter { $0.kind == .apnsAccepted }.count
        await services.close()
        #expect(first["numSent"] as? Int == 1)
        #expect(second["numSent"] as? Int == 1)
        #expect(second["numFailed"] as? Int == 0)
        #expect(accepted == 2)
    }

    /// An `appIdentifier` that cannot be an HTTP header value (RFC 9113 section 8.2.1) fails only its
    /// device, with what was wrong; the rest of the batch goes.
    @Test func aTopicThatCannotBeAHeaderFailsOnlyItsDevice() async throws {
        let services = try await start()
        let good = services.apns.gateway.register(topic: topic)
        try await install(services, "good", token: good)
        let saved = try await curl(
            services, "POST", "/installations",
            body:
                #"{"deviceType":"ios","installationId":"bad","deviceToken":"\#(String(repeating: "ab", count: 32))","appIdentifier":"com.x\r\nevil: 1"}"#
        )
        let id = try pushStatusId(
            try await curl(services, "POST", "/push", master: true, body: #"{"where":{},"data":{"alert":"x"}}"#))
        let status = try await finalStatus(services, id)
        let outcomes = try await curl(
            services, "GET", "/classes/_PushOutcome?where=%7B%22pushStatusId%22%3A%22\(id)%22%7D", master: true)
        await services.close()
        #expect(saved.status == 201, "\(saved.body)")
        #expect(status["numSent"] as? Int == 1)
        #expect(status["numFailed"] as? Int == 1)
        let rows = try #require(outcomes.json["results"] as? [[String: Any]])
        let errors = rows.compactMap { $0["error"] as? String }
        #expect(errors == [#"apns-topic cannot be sent in an HTTP header: "com.x\r\nevil: 1""#], "\(rows)")
    }
}
