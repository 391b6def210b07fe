import FakeAPNs
import FakeParse
import Foundation
import HTTPServiceSupport
import HarnessTimeline
import TestSupport
import Testing

/// FakeParse over HTTP with curl as the client, pushing through a real FakeAPNs over HTTP/2 and TLS.
@Suite struct FakeParseServerTests: ParseServing {
    @Test func anInstallationIsUpsertedByInstallationId() async throws {
        let services = try await start()
        let token = String(repeating: "AB", count: 32)
        let first = try await curl(
            services, "POST", "/installations",
            body: #"{"deviceType":"ios","deviceToken":"\#(token)","installationId":"4F1F-A","appIdentifier":"com.x"}"#)
        let second = try await curl(
            services, "POST", "/classes/_Installation",
            body: #"{"deviceType":"ios","deviceToken":"\#(token)","installationId":"4f1f-a","badge":2}"#)
        let list = try await curl(services, "GET", "/installations", master: true)
        let listWithoutMaster = try await curl(services, "GET", "/installations")
        await services.close()
        #expect(first.status == 201)
        #expect(first.json["objectId"] as? String != nil)
        #expect(second.status == 200)
        #expect(second.json["updatedAt"] != nil)
        let results = try #require(list.json["results"] as? [[String: Any]])
        #expect(results.count == 1)
        #expect(results.first?["deviceToken"] as? String == token.lowercased())
        #expect(results.first?["installationId"] as? String == "4f1f-a")
        #expect(results.first?["badge"] as? Int == 2)
        #expect(listWithoutMaster.status == 400)
        #expect(listWithoutMaster.json["code"] as? Int == 119)
        #expect(
            listWithoutMaster.json["error"] as? String
                == "Clients aren't allowed to perform the find operation on the installation collection.")
    }

    @Test func anInstallationNeedsAnId() async throws {
        let services = try await start()
        let result = try await curl(services, "POST", "/installations", body: #"{"deviceType":"ios"}"#)
        await services.close()
        #expect(result.status == 400)
        #expect(result.json["code"] as? Int == 135)
    }

    @Test func aPushNeedsTheMasterKeyAndATarget() async throws {
        let services = try await start()
        let noMaster = try await curl(services, "POST", "/push", body: #"{"where":{},"data":{"alert":"x"}}"#)
        let noTarget = try await curl(services, "POST", "/push", master: true, body: #"{"data":{"alert":"x"}}"#)
        await services.close()
        #expect(noMaster.status == 403)
        #expect(noMaster.json["error"] as? String == "unauthorized: master key is required")
        #expect(noTarget.json["code"] as? Int == 115)
    }

    @Test func aPushReachesTheRegisteredDeviceThroughAPNs() async throws {
        let services = try await start()
        let delivered = AsyncStream.makeStream(of: AcceptedNotification.self)
        let token = services.apns.gateway.register(topic: "com.razeware.NASA-TV") { delivered.continuation.yield($0) }
        _ = try await curl(
            services, "POST", "/installations",
            body:
                #"{"deviceType":"ios","deviceToken":"\#(token)","installationId":"i-1","appIdentifier":"com.razeware.NASA-TV"}"#
        )
        let push = try await curl(
            services, "POST", "/push", master: true,
            body:
                #"{"where":{"deviceType":"ios"},"data":{"content-available":1,"push_type":"background","priority":5,"photoTitle":"Nebula"}}"#
        )
        let stream = delivered.stream
        let notification = try #require(
            try await withDeadline(.seconds(30), "delivery to the device") { await stream.first { _ in true } })
        _ = try await services.timeline.waitFor("parse.push.sent", timeout: .seconds(30)) { $0.kind == .parsePushSent }
        await services.close()
        #expect(push.status == 200)
        #expect(push.json["result"] as? Bool == true)
        #expect(push.headers.lowercased().contains("x-parse-push-status-id:"))
        #expect(notification.pushType == "background")
        #expect(notification.priority == 5)
        let payload = try #require(
            JSONSerialization.jsonObject(with: Data(notification.payload.utf8)) as? [String: Any])
        #expect((payload["aps"] as? [String: Any])?["content-available"] as? Int == 1)
        #expect(payload["photoTitle"] as? String == "Nebula")
    }

    @Test func installationsSurviveARestart() async throws {
        let first = try await start()
        _ = try await curl(first, "POST", "/installations", body: #"{"deviceType":"ios","installationId":"keep-me"}"#)
        await first.parse.close()
        let second = try await start(directory: first.directory, apns: first.apns)
        let list = try await curl(second, "GET", "/installations", master: true)
        await second.close()
        let results = try #require(list.json["results"] as? [[String: Any]])
        #expect(results.map { $0["installationId"] as? String } == ["keep-me"])
    }
}
