import Foundation
import TestSupport
import Testing

/// Every catalogue scenario has a variant here in which the behaviour it checks is wrong: the reference
/// app built with a mistake (`--bug`), a backend sending the wrong push, a device or service setting
/// that breaks the rule the scenario is about, or the user step it depends on left out. Each variant
/// must fail, and its output must name what went wrong, so no scenario's expectation passes whatever
/// happens.
///
/// A variant is harness.yml with a few exact edits (each must match once), written beside it so its
/// relative paths still hold, and run like any scenario.
@Suite struct ScenarioVariantTests {
    struct Variant: Sendable, CustomStringConvertible {
        var scenario: String
        /// What is wrong, in words.
        var wrong: String
        /// Edits inside the scenario's own block of harness.yml.
        var edits: [Edit] = []
        /// Edits anywhere in harness.yml (an app's command, to build in a bug).
        var fileEdits: [Edit] = []
        var arguments: [String] = []
        /// What the output must say.
        var message: String
        var description: String { "\(scenario): \(wrong)" }
    }

    struct Edit: Sendable {
        var old: String
        var new: String
    }

    /// The reference app's entry in harness.yml, run with a bug.
    static func bug(_ name: String, app command: String = ".build/debug/nasa-tv") -> Edit {
        Edit(old: "command: [\(command)]", new: "command: [\(command), --bug, \(name)]")
    }

    /// The PushChat server's entry in harness.yml, run with a bug.
    static func serverBug(_ name: String) -> Edit {
        let command = "command: [python3, Fixtures/backends/pushchat_server.py"
        return Edit(old: command + "]", new: command + ", --bug, \(name)]")
    }

    static func remove(_ line: String) -> Edit { Edit(old: line + "\n", new: "") }

    /// Shortens how long the run waits for a chain that will not complete.
    static func within(_ from: String, _ to: String) -> Edit { Edit(old: "within: \(from)", new: "within: \(to)") }

    static let silentPush = "data: {content-available: 1, push_type: background, priority: 5}"

    static let variants: [Variant] = [
        Variant(
            scenario: "pushchat-exchange", wrong: "the server pushes each message to its sender too",
            fileEdits: [serverBug("pushes-to-sender")],
            message:
                "app.log: {bundleId: com.hollance.PushChat, device: alice, message: received: Alice: Hello from Alice}"),
        Variant(
            scenario: "pushchat-leave", wrong: "the server keeps a user who left in the room",
            fileEdits: [serverBug("ignores-leave")], message: "apns.request.accepted: {"),
        Variant(
            scenario: "pushchat-message-too-long", wrong: "the server takes a message of any length",
            fileEdits: [serverBug("no-length-limit")],
            message: "device.notification.shown: {body: Alice: éééé"),
        Variant(
            scenario: "pushchat-feedback", wrong: "the server never reads the feedback service",
            fileEdits: [serverBug("ignores-feedback")], message: "apns.request.rejected: Unregistered"),
        Variant(
            scenario: "parse-push-fan-out-20", wrong: "one of the twenty devices is offline when the push comes",
            edits: [
                Edit(
                    old: "      - each.home: nasa-tv\n",
                    new: "      - each.home: nasa-tv\n      - device-20.network: offline\n"),
                within("30s", "5s"),
            ],
            message: "expected device.push.received exactly 20 times, seen 19"),
        Variant(
            scenario: "silent-push-photo", wrong: "the app leaves the downloaded file in tmp",
            fileEdits: [bug("leaves-temp-file")], message: "transfer.file.lost: the app did not move the file"),
        Variant(
            scenario: "silent-push-photo-title", wrong: "the app ignores the payload's photoTitle",
            edits: [within("30s", "8s")], fileEdits: [bug("ignores-photo-title")],
            message: "the chain broke at app.ui {screen: photo, title: Nebula}"),
        Variant(
            scenario: "regular-push-photo", wrong: "the app ignores the tapped notification's photoTitle",
            edits: [within("30s", "8s")], fileEdits: [bug("ignores-photo-title")],
            message: "the chain broke at app.ui {button: Downloading, screen: photo, title: Orion Nebula}"),
        Variant(
            scenario: "video-download-foreground", wrong: "the app saves the video in Documents",
            fileEdits: [bug("saves-in-documents")],
            message: "nasa-tv's container has no Library/Caches/com.razeware.videos/discovery.mp4"),
        Variant(
            scenario: "video-download-background", wrong: "the app never calls the session's events handler",
            edits: [
                Edit(old: "media: {throttle: 1MB/s}", new: "media: {throttle: 1MB/s}\n    device: {timeScale: 0.1}")
            ],
            fileEdits: [bug("never-calls-events-handler")],
            message:
                "device.session.handlerNotCalled: the app did not call the completion handler of application(_:handleEventsForBackgroundURLSession:completionHandler:)"
        ),
        Variant(
            scenario: "video-download-crash", wrong: "the app never calls the session's events handler",
            edits: [
                Edit(old: "media: {throttle: 1MB/s}", new: "media: {throttle: 1MB/s}\n    device: {timeScale: 0.1}"),
                within("30s", "10s"),
            ],
            fileEdits: [bug("never-calls-events-handler")], message: "the chain broke at app.sessionEventsCompleted"),
        Variant(
            scenario: "video-download-force-quit", wrong: "the app does not recreate its session at launch",
            edits: [within("30s", "8s")], fileEdits: [bug("no-session-at-launch")],
            message:
                "the chain broke at device.session.event {cancelledReason: 0, code: -999, event: didCompleteWithError}"),
        Variant(
            scenario: "video-offline-playback", wrong: "the app plays the video from the server",
            fileEdits: [bug("plays-remote-url")],
            message: "the chain broke at app.ui {playbackURL: contains \"file:///\", screen: player}"),
        Variant(
            scenario: "podcast-content-id", wrong: "the backend names an episode the server does not have",
            edits: [Edit(old: "content-id: 42}}", new: "content-id: 43}}"), within("30s", "8s")],
            message: "the chain broke at transfer.completed {sha256: sha256 of downloads/42.mp3}"),
        Variant(
            scenario: "silent-push-foreground", wrong: "the app never calls the fetch completion handler",
            edits: [within("30s", "8s")], fileEdits: [bug("never-calls-completion-handler")],
            message: "the chain broke at app.fetchCompleted {result: newData}"),
        Variant(
            scenario: "silent-push-after-crash", wrong: "the backend leaves out content-available",
            edits: [Edit(old: silentPush, new: "data: {alert: New photo}"), within("30s", "8s")],
            message: "the chain broke at device.push.received {decision: launchInBackground}"),
        Variant(
            scenario: "silent-push-not-running", wrong: "the app never calls the fetch completion handler",
            edits: [within("30s", "8s")], fileEdits: [bug("never-calls-completion-handler")],
            message: "the chain broke at app.fetchCompleted {result: newData}"),
        Variant(
            scenario: "silent-push-force-quit", wrong: "the app crashed instead of being force-quit: pushes launch it",
            edits: [
                Edit(old: "- forceQuit: nasa-tv", new: "- crash: nasa-tv"),
                Edit(
                    old: "- waitFor: {event: device.push.received, timeout: 10s}\n      - launch: nasa-tv",
                    new: "- waitFor: {event: device.push.received, timeout: 10s}"),
            ],
            message: "device.app.launched:"),
        Variant(
            scenario: "transfer-survives-crash", wrong: "the app downloads in a default session",
            fileEdits: [bug("default-session")], message: "the task belonged to a default session"),
        Variant(
            scenario: "transfer-cancelled-by-force-quit", wrong: "the app does not recreate its session at launch",
            edits: [within("30s", "8s")], fileEdits: [bug("no-session-at-launch")],
            message:
                "the chain broke at device.session.event {cancelledReason: 0, code: -999, event: didCompleteWithError, held: true}"
        ),
        Variant(
            scenario: "transfer-completes-while-suspended",
            wrong: "the fixed app never calls the session's events handler",
            edits: [
                Edit(
                    old: "media:\n      throttle: 100KB/s",
                    new: "device: {timeScale: 0.1}\n    media:\n      throttle: 100KB/s")
            ],
            fileEdits: [bug("never-calls-events-handler", app: ".build/debug/nasa-tv, --fetch-completes-at-once")],
            message: "device.session.handlerNotCalled: the app did not call the completion handler"),
        Variant(
            scenario: "discretionary-waits-for-wifi",
            wrong: "the app downloads in a default session, which does not wait for Wi-Fi",
            edits: [
                Edit(
                    old: "- waitFor: {event: transfer.waiting, timeout: 10s}",
                    new: "- waitFor: {event: transfer.completed, timeout: 20s}"),
                within("30s", "5s"),
            ],
            fileEdits: [bug("default-session")],
            message: "the chain broke at transfer.started {discretionary: true}"),
        Variant(
            scenario: "transfer-waits-for-connectivity", wrong: "the server offers no ranges, so the task starts over",
            edits: [
                Edit(
                    old: "media:\n      throttle: 100KB/s",
                    new: "media:\n      throttle: 100KB/s\n      faults: [{fault: noAcceptRanges, path: /photos/*}]")
            ],
            message: "transfer.restarted:"),
        Variant(
            scenario: "background-app-refresh-off", wrong: "Background App Refresh is on: the push wakes the app",
            edits: [
                Edit(old: "device: {backgroundAppRefresh: false}", new: "device: {backgroundAppRefresh: true}"),
                remove("      - waitFor: {event: device.push.held, timeout: 10s}"),
                Edit(old: "- foreground: nasa-tv", new: "- waitFor: {event: app.fetchCompleted, timeout: 20s}"),
            ],
            message: "device.push.delivered:"),
        Variant(
            scenario: "push-budget-holds-wakes", wrong: "a budget of ten wakes an hour lets every push through",
            edits: [
                Edit(old: "pushBudget: {perHour: 1}", new: "pushBudget: {perHour: 10}"),
                Edit(
                    old: "- waitFor: {event: device.push.held, timeout: 10s}",
                    new: "- waitFor: {event: app.fetchCompleted, timeout: 20s}"),
            ],
            message: "the chain broke at device.push.held"),
        Variant(
            scenario: "held-push-discarded-on-crash",
            wrong: "the user opens the app instead: the held push is delivered",
            edits: [Edit(old: "- crash: nasa-tv", new: "- foreground: nasa-tv")],
            message: "device.push.delivered:"),
        Variant(
            scenario: "background-fetch", wrong: "the app never calls the fetch completion handler",
            edits: [within("30s", "8s")], fileEdits: [bug("never-calls-completion-handler")],
            message: "the chain broke at app.fetchCompleted {result: newData}"),
        Variant(
            scenario: "background-fetch-after-jetsam",
            wrong: "the user force-quit the app: no background fetch launches it",
            edits: [Edit(old: "- jetsam: nasa-tv", new: "- forceQuit: nasa-tv"), within("30s", "5s")],
            message: "the chain broke at device.app.exited {cause: systemTerminated}"),
        Variant(
            scenario: "lock-and-unlock", wrong: "the device is never unlocked",
            edits: [remove("      - unlock"), within("10s", "3s")], message: "the chain broke at device.unlocked"),
        Variant(
            scenario: "reboot-restores-push-launches",
            wrong: "no reboot: the force-quit app stays out of push launches",
            edits: [remove("      - reboot"), within("30s", "5s")], message: "the chain broke at device.rebooted"),
        Variant(
            scenario: "tap-notification-opens-app", wrong: "the app ignores the tapped notification",
            edits: [within("20s", "5s")], fileEdits: [bug("ignores-notification-tap")],
            message: "the chain broke at app.log {message: notification tapped: New photo of the day}"),
        Variant(
            scenario: "user-notification-on-screen", wrong: "the app asks for no banner while on screen",
            edits: [
                Edit(
                    old: "- waitFor: {event: device.notification.shown, timeout: 30s}",
                    new: "- waitFor: {event: device.notification.shown, timeout: 8s}")
            ],
            fileEdits: [bug("no-banner", app: ".build/debug/nasa-tv, --user-notifications")],
            message: "waitFor: no device.notification.shown"),
        Variant(
            scenario: "rate-limiter-delays-background-tasks", wrong: "no resume rate limiter",
            edits: [
                Edit(old: "device: {sessionLaunchDelay: 10s}", new: "device: {sessionLaunchDelay: 0s}"),
                within("30s", "8s"),
            ],
            message: "the chain broke at transfer.waiting {why: contains \"resume rate limiter\"}"),
        Variant(
            scenario: "silent-push-background", wrong: "the app is suspended at once, so the push resumes it",
            edits: [
                Edit(old: "device: {suspendAfterBackground: 30s}", new: "device: {suspendAfterBackground: 10ms}"),
                // The push goes once the app is suspended, not in a race with the 10 ms: a push through
                // Parse and FakeAPNs can arrive sooner than that.
                Edit(
                    old: "- home: nasa-tv\n",
                    new:
                        "- home: nasa-tv\n      - waitFor: {event: device.app.state, where: {state: suspended}, timeout: 5s}\n"
                ),
                within("30s", "8s"),
            ],
            message: "the chain broke at device.push.received {appState: background, decision: deliverInBackground}"),
        Variant(
            scenario: "push-without-content-available",
            wrong: "the backend adds content-available: the push wakes the app",
            edits: [
                Edit(
                    old: "data: {alert: Tonight's photo is ready}",
                    new: "data: {alert: Tonight's photo is ready, content-available: 1}")
            ],
            message: "device.push.delivered:"),
        Variant(
            scenario: "silent-push-with-alert", wrong: "the backend leaves out content-available",
            edits: [
                Edit(
                    old: "data: {alert: Tonight's photo is ready, content-available: 1}",
                    new: "data: {alert: Tonight's photo is ready}"),
                within("30s", "5s"),
            ],
            message: "the chain broke at device.push.received {decision: resumeInBackground}"),
        Variant(
            scenario: "background-time-delays-suspension", wrong: "the app never ends its background task",
            edits: [
                Edit(
                    old: "  background-time-delays-suspension:\n",
                    new: "  background-time-delays-suspension:\n    device: {timeScale: 0.1}\n"),
                Edit(
                    old: "- waitFor: {event: device.app.state, where: {state: suspended}, timeout: 15s}",
                    new: "- waitFor: {event: device.backgroundTask.expired, timeout: 15s}"),
            ],
            fileEdits: [bug("never-ends-background-task", app: ".build/debug/nasa-tv, --background-work, \"3\"")],
            message: "device.backgroundTask.expired:"),
        Variant(
            scenario: "silent-push-photo-slow-network", wrong: "a fast network: the tutorial's app is in time",
            edits: [Edit(old: "throttle: EDGE", new: "throttle: 4MB/s")], message: "app.fetchCompleted:"),
        Variant(
            scenario: "silent-push-photo-slow-network-fixed", wrong: "the tutorial's unfixed app on the slow link",
            arguments: ["--app", "nasa-tv-fixed=nasa-tv"],
            message: "device.watchdog.killed: the app did not call the completion handler"),
        Variant(
            scenario: "unregistered-device", wrong: "the app is still installed: APNs accepts the push",
            edits: [remove("      - uninstall: nasa-tv"), within("10s", "4s")],
            message: "the chain broke at device.app.uninstalled"),
        Variant(
            scenario: "resume-after-disconnect", wrong: "the server offers no ranges, so the download starts over",
            edits: [
                Edit(
                    old: "faults: [{fault: reset, afterBytes: 262144, path: /photos/*, count: 1}]",
                    new:
                        "faults: [{fault: noAcceptRanges, path: /photos/*}, {fault: reset, afterBytes: 262144, path: /photos/*, count: 1}]"
                )
            ],
            message: "transfer.restarted:"),
        Variant(
            scenario: "restart-without-accept-ranges", wrong: "the server offers ranges, so the download resumes",
            edits: [remove("        - {fault: noAcceptRanges, path: /photos/*}")], message: "transfer.resumed:"),
        Variant(
            scenario: "offline-store-and-forward", wrong: "the device stays online: both pushes arrive",
            edits: [
                remove("      - network: offline"), remove("      - waitFor: {event: apns.stored, timeout: 10s}"),
                remove("      - waitFor: {event: apns.replaced, timeout: 10s}"),
            ],
            message: "device.push.received:"),
        Variant(
            scenario: "offline-expiry", wrong: "the push outlives the time offline and is delivered",
            edits: [
                Edit(old: "expiration_interval: 5,", new: "expiration_interval: 600,"),
                remove("      - waitFor: {event: apns.expired, timeout: 20s}"),
            ],
            message: "apns.delivered:"),
        Variant(
            scenario: "alert-collapse", wrong: "the backend drops the collapse id: two notifications",
            edits: [
                Edit(old: "data: {alert: Nebula tonight, collapse_id: apod}", new: "data: {alert: Nebula tonight}"),
                within("10s", "4s"),
            ],
            message:
                "the chain broke at device.notification.shown {body: Nebula tonight, identifier: apod, replaced: true}"),
        Variant(
            scenario: "priority-5-coalesced", wrong: "no coalescing window: the first push is delivered too",
            edits: [Edit(old: "coalescingWindow: 8s", new: "coalescingWindow: 0s")], message: "device.push.received:"),
    ]

    /// harness.yml's lines for `scenario`: from its name to the next scenario's.
    /// The variants of the scenarios whose faults are on links other than the media server's.
    static let networkVariants: [Variant] = [
        Variant(
            scenario: "slow-parse-installation-retry", wrong: "the app gives up on its installation save at once",
            edits: [within("30s", "8s")],
            fileEdits: [bug("no-parse-retry", app: ".build/debug/nasa-tv, --parse-timeout, \"3\"")],
            message: "the chain broke at app.log {message: installation saved}"),
        Variant(
            scenario: "apns-unreachable-push-failed", wrong: "Parse reaches APNs: the push is sent",
            edits: [Edit(old: "parse-apns: down", new: "parse-apns: clear"), within("20s", "5s")],
            message: "apns.request.accepted:"),
        Variant(
            scenario: "push-expires-on-lost-apns-connection",
            wrong: "the push outlives the lost connection and is delivered",
            edits: [
                Edit(old: "expiration_interval: 5,", new: "expiration_interval: 600,"),
                remove("      - waitFor: {event: apns.expired, timeout: 20s}"),
            ],
            message: "apns.delivered:"),
        Variant(
            scenario: "dropped-push-background-fetch", wrong: "the app never calls the fetch completion handler",
            edits: [within("30s", "8s")], fileEdits: [bug("never-calls-completion-handler")],
            message: "the chain broke at app.fetchCompleted {result: newData}"),
        Variant(
            scenario: "network-change-mid-download", wrong: "the server offers no ranges, so the download starts over",
            edits: [
                Edit(
                    old: "device: {transferRequestTimeout: 3s}",
                    new:
                        "device: {transferRequestTimeout: 3s}\n    media: {faults: [{fault: noAcceptRanges, path: /videos/*}]}"
                )
            ],
            message: "transfer.restarted:"),
    ]

    static func block(of scenario: String, in text: String) throws -> Range<String.Index> {
        let start = try #require(text.range(of: "\n  \(scenario):\n"), "no scenario \(scenario) in harness.yml")
        var end = text.endIndex
        var search = start.upperBound
        while let next = text.range(of: "\n  ", range: search..<text.endIndex) {
            // The next line at an indent of two spaces and no more starts another scenario.
            if let character = text[next.upperBound...].first, character != " ", character != "#" {
                end = next.lowerBound
                break
            }
            search = next.upperBound
        }
        return start.lowerBound..<end
    }

    static func apply(_ edit: Edit, in text: inout String, range: Range<String.Index>, where place: String) throws {
        let matches = text[range].ranges(of: edit.old)
        try #require(matches.count == 1, "'\(edit.old)' is in \(place) \(matches.count) times, not once")
        text.replaceSubrange(matches[0], with: edit.new)
    }

    @Test(arguments: variants + networkVariants)
    func theScenarioFailsWhenItsBehaviourIsWrong(_ variant: Variant) async throws {
        let original = try String(contentsOf: PackagePaths.root.appendingPathComponent("harness.yml"), encoding: .utf8)
        var text = original
        for edit in variant.edits {
            try Self.apply(
                edit, in: &text, range: try Self.block(of: variant.scenario, in: text),
                where: "scenario \(variant.scenario)")
        }
        for edit in variant.fileEdits {
            try Self.apply(edit, in: &text, range: text.startIndex..<text.endIndex, where: "harness.yml")
        }
        // Beside harness.yml, so the media root and the app commands resolve as they do for it.
        let file = PackagePaths.root.appendingPathComponent("harness.variant-\(variant.scenario).yml")
        try text.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let reports = try PackagePaths.temporaryDirectory("variant-\(variant.scenario)")
        let result = try await HarnessCommand.run(
            [
                "run", variant.scenario, "--config", file.path, "--ephemeral-ports", "--skip-build", "--report-dir",
                reports.path,
            ]
                + variant.arguments)
        #expect(result.status == 1, "\(result.transcript)")
        #expect(result.standardOutput.contains("FAIL \(variant.scenario)"), "\(result.transcript)")
        // The run's one-line verdict (the broken link, the forbidden event, the count, the missing
        // file), not the live view, which lists every event whatever happened.
        let report = try JSONDecoder().decode(
            Report.self, from: Data(contentsOf: reports.appendingPathComponent("report.json")))
        #expect(
            report.message?.contains(variant.message) == true,
            "verdict: \(report.message ?? "none")\n\(result.transcript)")
    }

    struct Report: Decodable {
        var message: String?
    }

    @Test func everyCatalogueScenarioHasAVariant() async throws {
        let list = try await HarnessCommand.run(["list"])
        let names = list.standardOutput.split(separator: "\n").compactMap { line -> String? in
            let name = line.split(separator: " ").first.map(String.init) ?? ""
            return name.contains("-") ? name : nil
        }
        #expect(names.count == 51, "\(list.standardOutput)")
        #expect(
            Set(names) == Set((Self.variants + Self.networkVariants).map(\.scenario)),
            "\(Set(names).symmetricDifference((Self.variants + Self.networkVariants).map(\.scenario)))")
    }
}
