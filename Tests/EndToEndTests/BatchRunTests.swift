import Foundation
import TestSupport
import Testing

/// `harness run` over several scenarios: a shard of the catalogue, run two at a time, with one JUnit
/// report for the batch; and the arguments it refuses.
@Suite struct BatchRunTests {
    @Test func aShardRunsInParallelAndReportsEveryScenario() async throws {
        let list = try await HarnessCommand.run(["list"])
        let catalogue = list.standardOutput.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
        let shard = catalogue.enumerated().filter { $0.offset % 6 == 1 }.map(\.element)
        try #require(shard.count >= 4, "\(catalogue)")

        let reports = try PackagePaths.temporaryDirectory()
        let result = try await HarnessCommand.run([
            "run", "--all", "--shard", "2/6", "--parallel", "2", "--skip-build", "--report-dir", reports.path,
        ])
        #expect(result.status == 0, "\(result.transcript)")
        #expect(result.standardOutput.contains("\(shard.count) of \(shard.count) scenarios passed"), "\(result.transcript)")
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
            #expect(index.contains("<td>PASS</td><td><a href=\"\(name)/report.html\">\(name)</a></td>"), "\(name) in \(index)")
        }
        let summary = try #require(
            JSONSerialization.jsonObject(with: Data(contentsOf: reports.appendingPathComponent("summary.json"))) as? [String: Any])
        #expect(summary["passed"] as? Int == shard.count)
        #expect(summary["parallel"] as? Int == 2)
    }

    @Test(arguments: [
        (["run"], "name a scenario to run, or use --all"),
        (["run", "--all", "silent-push-photo"], "name scenarios or use --all, not both"),
        (["run", "--all", "--shard", "3/2"], "--shard takes I/N with 1 <= I <= N, such as 2/4, not '3/2'"),
        (["run", "--all", "--parallel", "0"], "--parallel takes a number of runs at a time, 1 or more"),
    ])
    func badBatchArgumentsExit2(_ arguments: [String], _ message: String) async throws {
        let result = try await HarnessCommand.run(arguments)
        #expect(result.status == 2, "\(result.transcript)")
        #expect(result.standardError.contains(message), "\(result.transcript)")
    }
}
