import Foundation
import TestSupport
import Testing

/// The built `harness` binary, run as a user runs it, on the real catalogue and on a buggy app.
@Suite struct HarnessRunTests {
    func run(_ arguments: [String]) async throws -> ChildProcess {
        try await HarnessCommand.run(arguments)
    }

    /// A second run into the same report folder starts from fresh state: the first run's Parse
    /// installation would otherwise get a push too (two recipients where one is expected).
    @Test func aReportFolderUsedAgainStartsFromFreshState() async throws {
        let reports = try PackagePaths.temporaryDirectory()
        let arguments = [
            "run", "unregistered-device", "--ephemeral-ports", "--skip-build", "--report-dir", reports.path,
        ]
        let first = try await run(arguments)
        let second = try await run(arguments)
        #expect(first.status == 0, "\(first.transcript)")
        #expect(second.status == 0, "\(second.transcript)")
        #expect(second.standardOutput.contains("recipients=1"), "\(second.transcript)")
    }

    @Test func silentPushPhotoPassesAndWritesItsReport() async throws {
        let reports = try PackagePaths.temporaryDirectory()
        let result = try await run([
            "run", "silent-push-photo", "--ephemeral-ports", "--skip-build", "--report-dir", reports.path,
        ])
        #expect(result.status == 0, "\(result.transcript)")
        #expect(result.standardOutput.contains("PASS silent-push-photo"))
        #expect(result.standardOutput.contains("transfer.progress"))

        let lines = try String(contentsOf: reports.appendingPathComponent("timeline.jsonl"), encoding: .utf8)
            .split(separator: "\n")
        let events = try lines.map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        let kinds = events.compactMap { $0["kind"] as? String }
        let chain = [
            "parse.push.accepted", "apns.request.accepted", "device.push.delivered", "transfer.completed",
            "app.localNotification", "app.fetchCompleted",
        ]
        let positions = chain.map { kind in kinds.firstIndex(of: kind) }
        #expect(positions.allSatisfy { $0 != nil }, "missing links in \(kinds)")
        #expect(positions.compactMap { $0 } == positions.compactMap { $0 }.sorted(), "links out of order: \(kinds)")
        let notification = try #require(events.first { $0["kind"] as? String == "app.localNotification" })
        #expect(
            (notification["attributes"] as? [String: String])?["alertBody"] == "Astronomy Picture of the Day Available")

        let junit = try String(contentsOf: reports.appendingPathComponent("junit.xml"), encoding: .utf8)
        #expect(junit.contains(#"<testcase classname="harness.scenarios" name="silent-push-photo""#))
        #expect(!junit.contains("<failure"))
        let report = try #require(
            JSONSerialization.jsonObject(with: Data(contentsOf: reports.appendingPathComponent("report.json")))
                as? [String: Any])
        #expect(report["outcome"] as? String == "PASS")
        let links = try #require(report["chain"] as? [[String: Any]])
        #expect(links.count == 6 && links.allSatisfy { $0["seen"] as? Bool == true })
    }

    @Test func anAppThatNeverCallsTheCompletionHandlerIsKilledAndTheRunFails() async throws {
        let directory = try PackagePaths.temporaryDirectory()
        let app = PackagePaths.binaries.appendingPathComponent("nasa-tv").path
        let media = PackagePaths.root.appendingPathComponent("Fixtures/media").path
        let configuration = """
            version: 1
            services:
              apns: {port: 0}
              media: {port: 0, root: \(media)}
              parse: {port: 0}
              device: {backgroundPushBudget: 2s, suspendAfterBackground: 200ms}
            apps:
              forgetful:
                bundleId: com.razeware.NASA-TV
                command: [\(app), --bug, never-calls-completion-handler]
                backgroundModes: [remote-notification]
            scenarios:
              forgets-completion-handler:
                steps:
            \(ScenarioFixtures.silentPushSteps(app: "forgetful", indent: 6))
                expect:
                  within: 30s
                  chain:
                    - device.push.delivered
                    - app.fetchCompleted: {result: newData}
                  never:
                    - device.watchdog.killed
            """
        let file = directory.appendingPathComponent("harness.yml")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        let result = try await run([
            "run", "forgets-completion-handler", "--config", file.path, "--report-dir",
            directory.appendingPathComponent("report").path,
        ])
        #expect(result.status == 1, "\(result.transcript)")
        #expect(result.standardOutput.contains("device.watchdog.killed"))
        #expect(
            result.standardOutput.contains(
                "did not call the completion handler of application(_:didReceiveRemoteNotification:fetchCompletionHandler:) within 2.0 seconds"
            ), "\(result.transcript)")
        let junit = try String(contentsOf: directory.appendingPathComponent("report/junit.xml"), encoding: .utf8)
        #expect(junit.contains("<failure"))
        #expect(junit.contains("completion handler"))
    }

    /// At timeScale 0.1 the 30 s budget of a silent push runs out after 3 s of real time: the watchdog
    /// still names 30 s, and fires between 3 s and (far below) 30 s after the wake.
    @Test func aScaledPolicyClockShortensTheBudgetButNotItsRule() async throws {
        let file = try ScenarioFixtures.writeConfiguration(
            ScenarioFixtures.header(
                media: "throttle: 1MB/s", device: "timeScale: 0.1", app: "forgetful",
                arguments: ["--bug", "never-calls-completion-handler"])
                    + """
                    scenarios:
                      scaled:
                        steps:
                    \(ScenarioFixtures.silentPushSteps(app: "forgetful", indent: 6))
                        expect:
                          within: 60s
                          chain: [device.push.delivered, device.watchdog.killed]
                    """)
        let reports = try PackagePaths.temporaryDirectory()
        let result = try await run(["run", "scaled", "--config", file.path, "--report-dir", reports.path])
        #expect(result.status == 0, "\(result.transcript)")
        #expect(result.standardOutput.contains("within 30.0 seconds"), "\(result.transcript)")
        let events = try String(contentsOf: reports.appendingPathComponent("timeline.jsonl"), encoding: .utf8)
            .split(separator: "\n").map {
                try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
        func time(_ kind: String) -> Double? { events.first { $0["kind"] as? String == kind }?["elapsed"] as? Double }
        // The budget's clock starts after the push is received and before the delivery is published.
        let received = try #require(time("device.push.received"))
        let delivered = try #require(time("device.push.delivered"))
        let killed = try #require(time("device.watchdog.killed"))
        #expect(killed - received >= 3, "not before the scaled budget")
        #expect(killed - delivered < 20, "3 s of real time, not 30: \(killed - delivered)")
    }

    @Test func nothingComesToTheForegroundWhileTheDeviceIsLocked() async throws {
        let file = try ScenarioFixtures.writeConfiguration(
            ScenarioFixtures.header(media: "throttle: 1MB/s", device: "suspendAfterBackground: 200ms")
                + """
                scenarios:
                  locked:
                    steps: [lock, {launch: nasa-tv}]
                    expect: {chain: [device.app.launched]}
                """)
        let result = try await run(["run", "locked", "--config", file.path])
        #expect(result.status == 1, "\(result.transcript)")
        #expect(
            result.standardOutput.contains("the device is locked: unlock it before you launch com.razeware.NASA-TV"))
    }

    @Test func listShowsTheCatalogue() async throws {
        let result = try await run(["list"])
        #expect(result.status == 0)
        #expect(result.standardOutput.contains("silent-push-photo"))
    }

    @Test func anUnknownScenarioExits2SayingWhereTheKnownOnesAre() async throws {
        let result = try await run(["run", "nope"])
        #expect(result.status == 2)
        #expect(result.standardError.contains("no scenario named 'nope'"))
        #expect(result.standardError.contains("'harness list' shows all"), "\(result.transcript)")
    }

    @Test func aBadAppReplacementExits2NamingTheApps() async throws {
        let unknown = try await run(["run", "silent-push-photo", "--app", "nasa-tv=nope"])
        #expect(unknown.status == 2)
        #expect(unknown.standardError.contains("no app named 'nope'"), "\(unknown.transcript)")
        #expect(unknown.standardError.contains("nasa-tv-python"))
        let malformed = try await run(["run", "silent-push-photo", "--app", "nasa-tv"])
        #expect(malformed.status == 2)
        #expect(malformed.standardError.contains("--app takes NAME=OTHER"), "\(malformed.transcript)")
    }

    @Test func anUnknownKeyExits2NamingFileLineAndKey() async throws {
        let directory = try PackagePaths.temporaryDirectory()
        let file = directory.appendingPathComponent("harness.yml")
        try "version: 1\nservices:\n  apns:\n    prot: 2197\n".write(to: file, atomically: true, encoding: .utf8)
        let result = try await run(["list", "--config", file.path])
        #expect(result.status == 2)
        #expect(
            result.standardError.contains("\(file.path):4:5: 'services.apns.prot': unknown key 'prot'"),
            "\(result.transcript)")
    }

    /// On a terminal (a pseudo-terminal from util-linux's `script`), the download's progress bar is
    /// redrawn in place and the kinds and verdict are coloured; NO_COLOR keeps the redraw, drops colour.
    @Test(arguments: [false, true]) func onATerminalProgressIsRedrawnInPlace(noColour: Bool) async throws {
        let reports = try PackagePaths.temporaryDirectory("terminal\(noColour)")
        let command = [
            HarnessCommand.path, "run", "silent-push-photo", "--ephemeral-ports", "--skip-build", "--report-dir",
            reports.path,
        ]
        let result = try await ChildProcess.run(
            "script", ["-qec", command.joined(separator: " "), "/dev/null"],
            environment: ["TERM": "xterm", "NO_COLOR": noColour ? "1" : ""], currentDirectory: PackagePaths.root)
        #expect(result.status == 0, "\(result.transcript)")
        let erase = "\r\u{1B}[2K"
        #expect(result.standardOutput.components(separatedBy: erase).count > 5, "\(result.transcript)")
        #expect(result.standardOutput.contains("100% 437316/437316 bytes task 1"))
        #expect(
            result.standardOutput.contains("\u{1B}[32;1mPASS silent-push-photo") == !noColour, "\(result.transcript)")
        #expect(result.standardOutput.contains("\u{1B}[33mtransfer.progress\u{1B}[0m") == !noColour)
        #expect(result.standardOutput.contains("PASS silent-push-photo"))
    }
}
