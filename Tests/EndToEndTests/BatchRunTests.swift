import Foundation
import HarnessTimeline
import TestSupport
import Testing

/// `harness run` over several scenarios: a shard of the catalogue, run two at a time, with one JUnit
/// report for the batch; and the arguments it refuses.
@Suite struct BatchRunTests {
    @Test func aShardRunsInParallelAndReportsEveryScenario() async throws {
        let list = try await HarnessCommand.run(["list"])
        let catalogue = list.standardOutput.split(separator: "\n").compactMap {
            $0.split(separator: " ").first.map(String.init)
        }
        let shard = catalogue.enumerated().filter { $0.offset % 6 == 1 }.map(\.element)
        try #require(shard.count >= 4, "\(catalogue)")

        let reports = try PackagePaths.temporaryDirectory()
        let result = try await HarnessCommand.run([
            "run", "--all", "--shard", "2/6", "--parallel", "2", "--skip-build", "--report-dir", reports.path,
        ])
        #expect(result.status == 0, "\(result.transcript)")
        #expect(
            result.standardOutput.contains("\(shard.count) of \(shard.count) scenarios passed"), "\(result.transcript)")
        let junit = try String(contentsOf: reports.appendingPathComponent("junit.xml"), encoding: .utf8)
        #expect(junit.contains(#"tests="\#(shard.count)" failures="0" errors="0""#), "\(junit)")
        for name in shard {
            #expect(junit.contains(#"name="\#(name)""#), "\(name) in \(junit)")
            let output = try String(contentsOf: reports.appendingPathComponent("\(name)/output.txt"), encoding: .utf8)
            #expect(output.contains("Chain:"), "each scenario's own lines are kept: \(name)")
            #expect(FileManager.default.fileExists(atPath: reports.appendingPathComponent("\(name)/report.json").path))
            #expect(FileManager.default.fileExists(atPath: reports.appendingPathComponent("\(name)/report.html").path))
        }
        let index = try String(contentsOf: reports.appendingPathComponent("index.html"), encoding: .utf8)
        #expect(index.contains("\(shard.count) of \(shard.count)</span> scenarios passed"), "\(index)")
        for name in shard {
            #expect(
                index.contains("<td>PASS</td><td><a href=\"\(name)/report.html\">\(name)</a></td>"),
                "\(name) in \(index)")
        }
        let summary = try #require(
            JSONSerialization.jsonObject(with: Data(contentsOf: reports.appendingPathComponent("summary.json")))
                as? [String: Any])
        #expect(summary["passed"] as? Int == shard.count)
        // Every event these runs published is one docs/event-kinds.md lists, with the attributes it lists.
        for name in shard {
            let timeline = try String(
                contentsOf: reports.appendingPathComponent("\(name)/timeline.jsonl"), encoding: .utf8)
            for line in timeline.split(separator: "\n") {
                let event = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                let kind = event["kind"] as? String ?? ""
                // A device's name is on every event of one of several devices, whatever its kind.
                let keys = Set((event["attributes"] as? [String: Any] ?? [:]).keys)
                    .subtracting(EventCatalogue.stampedAttributes)
                guard let spec = EventCatalogue.spec(for: EventKind(kind)) else {
                    Issue.record("\(name): \(kind) is not in docs/event-kinds.md")
                    continue
                }
                #expect(
                    Set(spec.attributes).isSubset(of: keys),
                    "\(name): \(kind) lacks \(Set(spec.attributes).subtracting(keys))")
                #expect(
                    keys.isSubset(of: Set(spec.attributes + spec.optional)),
                    "\(name): \(kind) has \(keys.subtracting(spec.attributes + spec.optional))")
            }
        }
        #expect(summary["parallel"] as? Int == 2)
    }

    /// Ctrl-C during a batch of three: the batch's reports still account for all three, those that
    /// ran, the one interrupted and the rest skipped, so CI sees what never ran. The signal is sent once
    /// the first scenario's app has launched; on a loaded machine the line may reach the test after that
    /// scenario passed, so which one is interrupted is read from the reports, and the rest must agree.
    @Test func anInterruptedBatchReportsTheScenariosItNeverRanAsSkipped() async throws {
        let reports = try PackagePaths.temporaryDirectory()
        let names = ["silent-push-photo", "resume-after-disconnect", "offline-store-and-forward"]
        let run = try RunningChild(
            HarnessCommand.path,
            ["run"] + names + ["--skip-build", "--ephemeral-ports", "--report-dir", reports.path],
            currentDirectory: PackagePaths.root)
        _ = try #require(await run.waitForLine(containing: "device.app.launched"), "\(run.output)")
        run.send(SIGINT)
        #expect(await run.waitForExit() == 130, "\(run.output)")
        let summary = try #require(
            JSONSerialization.jsonObject(with: Data(contentsOf: reports.appendingPathComponent("summary.json")))
                as? [String: Any])
        #expect(summary["scenarios"] as? Int == 3)
        let outcomes = (summary["results"] as? [[String: Any]] ?? []).map { $0["outcome"] as? String ?? "" }
        let interrupted = try #require(outcomes.firstIndex(of: "INTERRUPTED"), "\(outcomes)")
        #expect(outcomes[..<interrupted].allSatisfy { $0 == "PASS" }, "\(outcomes)")
        #expect(outcomes[(interrupted + 1)...].allSatisfy { $0 == "SKIPPED" }, "\(outcomes)")
        #expect(outcomes.count == 3, "\(outcomes)")
        let skipped = Array(names[(interrupted + 1)...])
        #expect(summary["failed"] as? [String] == [names[interrupted]])
        #expect(summary["skipped"] as? [String] == skipped)
        let junit = try String(contentsOf: reports.appendingPathComponent("junit.xml"), encoding: .utf8)
        #expect(junit.contains(#"tests="3" failures="0" errors="1" skipped="\#(skipped.count)""#), "\(junit)")
        #expect(junit.components(separatedBy: "<skipped message=").count == skipped.count + 1, "\(junit)")
        let index = try String(contentsOf: reports.appendingPathComponent("index.html"), encoding: .utf8)
        for name in skipped { #expect(index.contains("<td>SKIPPED</td><td>\(name)</td>"), "\(index)") }
        let link = "<a href=\"\(names[interrupted])/report.html\">\(names[interrupted])</a>"
        #expect(index.contains("<td>INTERRUPTED</td><td>\(link)</td>"), "\(index)")
    }

    @Test(arguments: [
        (
            ["run", "silent-push-phtoo"],
            "no scenario named 'silent-push-phtoo' in harness.yml; did you mean 'silent-push-photo'"
        ),
        (["run", "--all", "silent-push-photo"], "name scenarios or use --all, not both"),
        (["run", "--all", "--shard", "3/2"], "--shard takes I/N with 1 <= I <= N, such as 2/4, not '3/2'"),
        (["run", "--all", "--parallel", "0"], "--parallel takes a number of runs at a time, 1 to 64"),
        (
            ["run", "--all", "--parallel", "9223372036854775807"],
            "--parallel takes a number of runs at a time, 1 to 64"
        ),
    ])
    func badBatchArgumentsExit2(_ arguments: [String], _ message: String) async throws {
        let result = try await HarnessCommand.run(arguments)
        #expect(result.status == 2, "\(result.transcript)")
        #expect(result.standardError.contains(message), "\(result.transcript)")
    }
}
