import Foundation
import TestSupport
import Testing

/// The reference app built with one mistake at a time: each run fails, and the output names the
/// mistake in Apple's terms.
@Suite struct BuggyAppTests {
    struct Case: Sendable, CustomStringConvertible {
        var bug: String
        /// More app arguments (the fixed fetch flow, for one).
        var arguments: [String] = []
        /// Steps after the silent push.
        var after: [String] = []
        /// Steps instead of the silent push's.
        var steps: [String]?
        var chain: [String]
        var never: [String]
        /// What the output must say.
        var message: String
        var description: String { bug }
    }

    static let cases: [Case] = [
        Case(
            bug: "never-calls-events-handler", arguments: ["--fetch-completes-at-once"],
            chain: ["device.session.didFinishEvents", "app.sessionEventsCompleted"],
            never: ["device.session.handlerNotCalled"],
            message:
                "did not call the completion handler of application(_:handleEventsForBackgroundURLSession:completionHandler:) within 2.0 seconds"
        ),
        Case(
            bug: "leaves-temp-file", chain: ["transfer.completed", "app.localNotification"],
            never: ["transfer.file.lost"],
            message:
                "the app did not move the file in urlSession(_:downloadTask:didFinishDownloadingTo:); it was deleted when the method returned"
        ),
        Case(
            bug: "default-session", after: ["- waitFor: {event: transfer.progress, timeout: 10s}", "- crash: buggy"],
            chain: ["transfer.completed"], never: ["transfer.failed"],
            message: "the task belonged to a default session, which lives in the app's process and died with it"
        ),
        Case(
            bug: "never-ends-background-task",
            steps: [
                "- launch: buggy", "- waitFor: {event: parse.installation.saved, timeout: 30s}", "- home: buggy",
            ],
            chain: ["device.app.state: {state: suspended}"], never: ["device.watchdog.killed"],
            message:
                "the app did not call endBackgroundTask(_:) for background task 1 ('save state') before its 2.0 seconds ran out"
        ),
    ]

    @Test(arguments: cases)
    func theRunFailsNamingTheMistake(_ bug: Case) async throws {
        let margin = String(repeating: " ", count: 6)
        let header = ScenarioFixtures.header(
            media: "throttle: 200KB/s",
            device: "backgroundPushBudget: 2s, suspendAfterBackground: 200ms, backgroundTimeAllowance: 2s",
            app: "buggy",
            arguments: ["--bug", bug.bug] + bug.arguments)
        let file = try ScenarioFixtures.writeConfiguration(
            header + """
                scenarios:
                  buggy:
                    steps:
                \(bug.steps.map { $0.map { margin + $0 }.joined(separator: "\n") } ?? ScenarioFixtures.silentPushSteps(app: "buggy", indent: 6))
                \(bug.after.map { margin + $0 }.joined(separator: "\n"))
                    expect:
                      within: 20s
                      chain: [\(bug.chain.joined(separator: ", "))]
                      never: [\(bug.never.joined(separator: ", "))]
                """, "buggy-\(bug.bug)")
        let result = try await HarnessCommand.run(["run", "buggy", "--config", file.path])
        #expect(result.status == 1, "\(result.transcript)")
        #expect(result.standardOutput.contains("FAIL buggy"), "\(result.transcript)")
        #expect(result.standardOutput.contains(bug.message), "\(result.transcript)")
    }
}
