import Foundation
import TestSupport
import Testing

/// FakeParse's dashboard in headless Chromium (Tests/Browser/check_dashboard.py drives it through
/// chromedriver) against `harness serve`, with five installations: two good iOS devices on the
/// channel `news`, one whose app was removed, one with a malformed token, one Android. Screenshots of
/// each page go to ci-artifacts/.
@Suite struct ParseDashboardTests {
    struct Page: Decodable {
        struct InvalidJSON: Decodable {
            var error: String
            var sendDisabled: Bool
        }

        var title: String
        var keyFieldType: String
        var wrongKey: String
        var installationCount: String
        var urlAfterLogin: String
        var androidCount: String
        var everyoneCount: Int
        var segmentCount: Int
        var segmentWithAndroidCount: Int
        var channelsCount: Int
        var jsonLookingTextWarning: String
        var invalidJSON: InvalidJSON
        var confirmation: String
        var focusInDialog: String
        var sentAfterCancel: String
        var pushId: String
        var detailStatus: String
        var reasons: [String]
        var outcomes: [[String]]
        var pastPushes: [[String]]
        var feedRows: Int
        var focusOnDetails: Bool
        var keyInLocalStorage: Int
        var pageError: String
        var console: [ReportPageTests.Page.ConsoleEntry]
    }

    @Test func aPersonComposesAPushAndSeesWhatAPNsAnsweredForEachDevice() async throws {
        let serve = try await ServedHarness("parse-dashboard")
        let topic = serve.url("apns", "topic")
        func register() async throws -> String {
            let answer = try await CurlExchange.json(
                "POST", serve.url("apns", "controlURL") + "/devices", #"{"topic": "\#(topic)"}"#)
            let device = try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any]
            return try #require(device?["deviceToken"] as? String, "\(answer)")
        }
        let good = [try await register(), try await register()]
        let removed = try await register()
        _ = try await CurlExchange.run(["-X", "DELETE", serve.url("apns", "controlURL") + "/devices/" + removed])
        let installations = [
            (good[0], "ios", "news"), (good[1], "ios", "news"), (removed, "ios", "weather"),
            (String(repeating: "0f", count: 31), "ios", "weather"), ("fcm-token", "android", "news"),
        ]
        var headers = ["X-Parse-Application-Id: \(serve.url("parse", "applicationId"))"]
        if let key = serve.endpoints["parse"]?["clientKey"] { headers.append("X-Parse-Client-Key: \(key)") }
        for (index, (token, type, channel)) in installations.enumerated() {
            let saved = try await CurlExchange.json(
                "POST", serve.url("parse") + "/installations",
                #"{"deviceType":"\#(type)","deviceToken":"\#(token)","installationId":"i-\#(index)","appIdentifier":"\#(topic)","channels":["\#(channel)"]}"#,
                headers: headers)
            #expect(saved.status == 201, "\(saved)")
        }
        let dashboard = serve.url("parse").replacingOccurrences(of: "/parse", with: "/dashboard")
        let browser = try await ChildProcess.run(
            PackagePaths.python,
            [
                PackagePaths.root.appendingPathComponent("Tests/Browser/check_dashboard.py").path, dashboard,
                serve.url("parse", "masterKey"), ReportPageTests.artifacts.path,
            ], timeout: .seconds(180))
        #expect(await serve.stop() == 0)
        try #require(browser.status == 0, "\(browser.transcript)")
        let page = try JSONDecoder().decode(Page.self, from: Data(browser.standardOutput.utf8))

        #expect(page.title == "FakeParse dashboard")
        #expect(page.keyFieldType == "password")
        #expect(page.wrongKey == "That is not the master key.")
        #expect(!page.urlAfterLogin.contains(serve.url("parse", "masterKey")))
        #expect(page.installationCount == "5 installations")
        #expect(page.androidCount == "1 installation")
        #expect(page.everyoneCount == 5)
        #expect(page.segmentCount == 4, "iOS only")
        #expect(page.segmentWithAndroidCount == 5)
        #expect(page.channelsCount == 3, "news: two iOS devices and the Android one")
        #expect(page.jsonLookingTextWarning.hasPrefix("This looks like JSON."))
        #expect(page.invalidJSON.error == "Your message is not valid JSON.")
        #expect(page.invalidJSON.sendDisabled)
        #expect(page.confirmation.contains("5 devices"), "\(page.confirmation)")
        #expect(page.focusInDialog == "confirm-cancel", "the safe choice has the focus")
        #expect(page.sentAfterCancel.isEmpty)
        #expect(page.pastPushes.count == 1, "the cancelled confirmation sent nothing: \(page.pastPushes)")
        #expect(page.focusOnDetails, "the focus follows to the push's details")
        #expect(page.keyInLocalStorage == 0, "nothing kept beyond the tab's session")
        #expect(page.pageError.isEmpty, "\(page.pageError)")
        #expect(page.detailStatus == "SENT")
        #expect(page.outcomes.count == 5)
        #expect(page.reasons.contains("1 × Unregistered (410)"), "\(page.reasons)")
        #expect(page.reasons.contains("1 × BadDeviceToken (400)"), "\(page.reasons)")
        #expect(page.reasons.contains("1 × Can not find sender for push type android"), "\(page.reasons)")
        let byToken = Dictionary(uniqueKeysWithValues: page.outcomes.map { ($0[0], $0) })
        #expect(byToken[removed]?[2] == "410")
        #expect(byToken[good[0]]?[2] == "200")
        #expect(page.pastPushes.first?.contains("Hello, everyone") == true, "\(page.pastPushes)")
        #expect(
            page.pastPushes.first?[2] == "2" && page.pastPushes.first?[3] == "3", "sent 2, failed 3: \(page.pastPushes)"
        )
        #expect(page.feedRows == 5)
        #expect(page.console.filter { $0.level == "SEVERE" }.isEmpty, "\(page.console)")
    }

    /// A person sends the push from the dashboard while a scenario runs and waits for it: the device
    /// wakes the suspended app, the photo downloads and the local notification is shown.
    @Test func aPushComposedInTheDashboardDuringARunReachesTheDevice() async throws {
        let file = try ScenarioFixtures.writeConfiguration(
            ScenarioFixtures.header(media: "throttle: 10MB/s", device: "suspendAfterBackground: 500ms")
                .replacingOccurrences(of: "parse: {port: 0}", with: "parse: {port: 0, masterKey: dashboard-master}")
                    + """
                    scenarios:
                      from-the-dashboard:
                        steps:
                          - launch: nasa-tv
                          - waitFor: {event: parse.installation.saved, timeout: 30s}
                          - home: nasa-tv
                          - waitFor: {event: device.app.state, where: {state: suspended}, timeout: 10s}
                          - waitFor: {event: device.push.received, timeout: 120s}
                        expect:
                          within: 60s
                          chain:
                            - parse.push.accepted: {recipients: "1"}
                            - device.push.delivered
                            - transfer.completed
                            - app.localNotification
                    """)
        let reports = try PackagePaths.temporaryDirectory()
        let run = try RunningChild(
            HarnessCommand.path, ["run", "from-the-dashboard", "--config", file.path, "--report-dir", reports.path],
            currentDirectory: PackagePaths.root)
        let started = try #require(
            await run.waitForLine(containing: "service=parse url="), "the run never started Parse: \(run.output)")
        let parse = try #require(started.split(separator: " ").first { $0.hasPrefix("url=") }?.dropFirst(4))
        _ = try #require(
            await run.waitForLine(containing: "waitFor device.push.received"), "the run never waited: \(run.output)")
        let browser = try await ChildProcess.run(
            PackagePaths.python,
            [
                PackagePaths.root.appendingPathComponent("Tests/Browser/send_from_dashboard.py").path,
                parse.replacingOccurrences(of: "/parse", with: "/dashboard"), "dashboard-master",
                #"{"content-available": 1, "push_type": "background", "priority": 5}"#,
                ReportPageTests.artifacts.appendingPathComponent("dashboard-during-a-run.png").path,
            ], timeout: .seconds(120))
        let status = await run.waitForExit()
        #expect(browser.status == 0, "\(browser.transcript)")
        let sent = try JSONSerialization.jsonObject(with: Data(browser.standardOutput.utf8)) as? [String: Any]
        #expect(sent?["recipients"] as? Int == 1, "\(browser.transcript)")
        #expect((sent?["pushId"] as? String)?.isEmpty == false, "\(browser.transcript)")
        #expect(status == 0, "\(run.output)")
    }

    /// A web app on another origin calls FakeParse as it calls Parse Server: Chromium's CORS preflight is
    /// answered without keys, the page saves an installation, sends a push and reads its status id (an
    /// exposed header); a find without the master key is still refused with Parse's answer.
    @Test func aPageOnAnotherOriginCallsParseAsParseServerAllowsIt() async throws {
        struct Call: Decodable {
            struct Body: Decodable {
                var code: Int?
                var objectId: String?
            }
            var status: Int?
            var body: Body?
            var pushStatusId: String?
            var error: String?
        }
        struct Seen: Decodable {
            var origin: String
            var saved: Call
            var pushed: Call
            var refused: Call
        }
        let serve = try await ServedHarness("parse-cross-origin")
        let preflight = try await CurlExchange.run([
            "-i", "-X", "OPTIONS", "-H", "Origin: http://web.example", "-H", "Access-Control-Request-Method: POST",
            "-H", "Access-Control-Request-Headers: x-parse-application-id, x-parse-master-key, content-type",
            serve.url("parse") + "/push",
        ])
        let page = serve.url("media") + "/"
        let browser = try await ChildProcess.run(
            PackagePaths.python,
            [
                PackagePaths.root.appendingPathComponent("Tests/Browser/check_cross_origin.py").path, page,
                serve.url("parse"), serve.url("parse", "applicationId"), serve.url("parse", "masterKey"),
                serve.url("parse", "clientKey"),
            ], timeout: .seconds(120))
        #expect(await serve.stop() == 0)

        #expect(preflight.status == 200, "\(preflight)")
        let headers = preflight.body.lowercased()
        #expect(headers.contains("access-control-allow-origin: *"), "\(preflight)")
        #expect(headers.contains("access-control-allow-methods: get,put,post,delete,options"), "\(preflight)")
        #expect(headers.contains("x-parse-master-key, x-parse-rest-api-key"), "\(preflight)")
        #expect(headers.contains("access-control-expose-headers: x-parse-job-status-id, x-parse-push-status-id"))
        try #require(browser.status == 0, "\(browser.transcript)")
        let seen = try JSONDecoder().decode(Seen.self, from: Data(browser.standardOutput.utf8))
        let parse = try #require(URL(string: serve.url("parse")))
        #expect(seen.origin != "http://\(parse.host() ?? ""):\(parse.port ?? 0)", "the page is on another origin")
        #expect(seen.saved.status == 201, "\(browser.standardOutput)")
        #expect(seen.saved.body?.objectId?.isEmpty == false, "\(browser.standardOutput)")
        #expect(seen.pushed.status == 200, "\(browser.standardOutput)")
        #expect(
            seen.pushed.pushStatusId?.isEmpty == false, "the page reads the exposed header: \(browser.standardOutput)")
        #expect(seen.refused.status == 400, "\(browser.standardOutput)")
        #expect(seen.refused.body?.code == 119, "\(browser.standardOutput)")
    }
}
