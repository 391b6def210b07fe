import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The PushChat pair interrupted: every process of the run (the server, each phone's app) ends with it.
@Suite struct PushChatRunTests {
    /// The processes whose environment names `folder` (the run's state is under it: the backend's data
    /// folder, the apps' containers), but zombies.
    func processes(mentioning folder: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { Int32($0) }.filter { pid in
            guard pid != getpid(), let environment = FileManager.default.contents(atPath: "/proc/\(pid)/environ"),
                let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                stat.split(separator: ")").last?.split(separator: " ").first != "Z"
            else { return false }
            return String(decoding: environment, as: UTF8.self).contains(folder)
        }
    }

    @Test func ctrlCDuringAChatLeavesNoProcessOfTheRunBehind() async throws {
        let root = PackagePaths.root.path
        let file = try ScenarioFixtures.writeConfiguration(
            """
            version: 1
            services:
              apns: {port: 0, controlPort: 0, legacyPort: 0, feedbackPort: 0}
              media: {port: 0, controlPort: 0, root: \(ScenarioFixtures.media)}
              parse: {port: 0}
            apps:
              pushchat:
                bundleId: com.hollance.PushChat
                command: [python3, \(root)/Fixtures/apps/pushchat.py]
            backends:
              pushchat:
                command: [python3, \(root)/Fixtures/backends/pushchat_server.py]
                port: free
                ready: {http: /api.php}
            scenarios:
              chat:
                backends: [pushchat]
                devices: [alice, bob]
                steps:
                  - each.launch: pushchat
                  - waitFor: {event: app.registeredForRemoteNotifications, count: 2, timeout: 60s}
                  - bob.type: {app: pushchat, field: nickname, text: SteveJ}
                  - bob.type: {app: pushchat, field: code, text: room}
                  - bob.tap: {app: pushchat, button: Start!}
                  - waitFor: {event: app.log, where: {message: never logged}, timeout: 10m}
                expect:
                  chain: [app.log]
            """)
        let reports = file.deletingLastPathComponent().appendingPathComponent("report")
        let run = try RunningChild(
            HarnessCommand.path, ["run", "chat", "--config", file.path, "--report-dir", reports.path],
            currentDirectory: PackagePaths.root)
        _ = try #require(await run.waitForLine(containing: "joined room as SteveJ"), "\(run.output)")
        // The server and both apps are running, each with the run's folder in its environment.
        let running = processes(mentioning: reports.path)
        #expect(running.count >= 3, "\(running)")
        run.send(SIGINT)
        let status = await run.waitForExit()
        #expect(status == 130, "\(run.output)")
        #expect(processes(mentioning: reports.path).isEmpty, "left behind: \(processes(mentioning: reports.path))")
    }

    /// The report of a chat between two phones: a lifeline for each phone and its app and one for the
    /// backend in the sequence diagram, and each phone's notifications in report.json.
    @Test func theReportShowsEachPhoneOnItsOwn() async throws {
        let (result, reports) = try await HarnessCommand.runCatalogueScenario("pushchat-exchange")
        #expect(result.status == 0, "\(result.transcript)")
        let page = try String(contentsOf: reports.appendingPathComponent("report.html"), encoding: .utf8)
        let lanes = page.components(separatedBy: "class=\"lane-name\"").dropFirst().compactMap {
            $0.split(separator: ">", maxSplits: 1).last?.split(separator: "<").first.map(String.init)
        }
        #expect(
            lanes == [
                "Parse", "APNs", "Device alice", "App alice", "Device bob", "App bob", "Media server", "Backends",
            ],
            "\(lanes)")
        struct Report: Decodable {
            struct Device: Decodable, Equatable {
                var name: String
                var pushesReceived: Int
                var notificationsShown: [String]
            }
            var devices: [Device]
        }
        let report = try JSONDecoder().decode(
            Report.self, from: Data(contentsOf: reports.appendingPathComponent("report.json")))
        #expect(
            report.devices == [
                .init(name: "alice", pushesReceived: 1, notificationsShown: ["SteveJ: Hi Alice"]),
                .init(name: "bob", pushesReceived: 1, notificationsShown: ["Alice: Hello from Alice"]),
            ])
    }
}
