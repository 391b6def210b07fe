import FakeAPNs
import FakeParse
import Foundation
import HTTPServiceSupport
import HarnessTimeline
import TestSupport
import Testing

/// FakeParse over HTTP with curl as the client, pushing through a real FakeAPNs over HTTP/2 and TLS.
@Suite struct FakeParseServerTests {
    struct Services {
        var apns: FakeAPNsServer
        var parse: FakeParseServer
        var timeline: Timeline
        var directory: URL

        func close() async {
            await parse.close()
            await apns.close()
        }
    }

    func start(
        directory: URL? = nil, apns existing: FakeAPNsServer? = nil, timeline: Timeline = Timeline(),
        limits: HTTPLimits = HTTPLimits()
    ) async throws -> Services {
        let directory = try directory ?? PackagePaths.temporaryDirectory()
        var apnsConfiguration = FakeAPNsConfiguration(credentialsDirectory: directory.appendingPathComponent("apns"))
        apnsConfiguration.port = 0
        let apns: FakeAPNsServer
        if let existing {
            apns = existing
        } else {
            apns = try await FakeAPNsServer.start(configuration: apnsConfiguration, timeline: timeline)
        }
        var configuration = FakeParseConfiguration(
            databasePath: directory.appendingPathComponent("parse.sqlite").path,
            apns: APNsProviderConfiguration(
                url: apns.url, caFile: apns.caFile.path, teamId: apns.signingKey.teamId, keyId: apns.signingKey.keyId,
                keyFile: apns.keyFile.path))
        configuration.port = 0
        configuration.masterKey = "master"
        configuration.applicationId = "app"
        configuration.limits = limits
        let parse = try await FakeParseServer.start(configuration: configuration, timeline: timeline)
        return Services(apns: apns, parse: parse, timeline: timeline, directory: directory)
    }

    func curl(_ services: Services, _ method: String, _ path: String, master: Bool = false, body: String? = nil)
        async throws
        -> (status: Int, json: [String: Any], headers: String)
    {
        var arguments = [
            "--silent", "--show-error", "-X", method, "-H", "X-Parse-Application-Id: app", "-H",
            "Content-Type: application/json", "--dump-header", "/dev/stderr", "--write-out", "\n%{http_code}",
        ]
        if master { arguments += ["-H", "X-Parse-Master-Key: master"] }
        if let body { arguments += ["--data", body] }
        let result = try await ChildProcess.run("curl", arguments + [services.parse.url + path])
        let lines = result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false)
        let status = Int(lines.last ?? "") ?? 0
        let text = lines.dropLast().joined(separator: "\n")
        let json = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
        return (status, json, result.standardError)
    }

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
