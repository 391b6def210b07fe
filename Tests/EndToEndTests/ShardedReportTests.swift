import Foundation
import TestSupport
import Testing

/// Issue 32: CI spreads a run over shards; `harness report merge` joins their report folders into one
/// junit.xml, summary.json and index.html, refusing folders that were not made from the same world.
@Suite struct ShardedReportTests {
    @Test func twoShardsJoinIntoOneReportAndFoldersOfAnotherWorldAreRefused() async throws {
        let file = try ScenarioFixtures.writeConfiguration(
            ScenarioFixtures.header(media: "throttle: 2MB/s", device: "backgroundPushBudget: 5s")
                + ScenarioFixtures.buggyApp + "scenarios:\n" + ScenarioFixtures.photoScenario("good")
                + ScenarioFixtures.photoScenario("bad", app: "buggy", within: "20s"))
        let project = file.deletingLastPathComponent()
        for shard in 1...2 {
            let run = try await HarnessCommand.run(
                [
                    "run", "--all", "--shard", "\(shard)/2", "--record-failures", "cassettes", "--report-dir",
                    "shard\(shard)",
                ], in: project)
            #expect(run.status == (shard == 1 ? 0 : 1), "\(run.transcript)")
        }
        let merged = try await HarnessCommand.run(["report", "merge", "shard1", "shard2", "-o", "all"], in: project)
        #expect(merged.status == 0, "\(merged.transcript)")
        #expect(merged.standardOutput.contains("joined 2 report folders: 2 scenarios in all"), "\(merged.transcript)")
        let all = project.appendingPathComponent("all")
        let junit = try String(contentsOf: all.appendingPathComponent("junit.xml"), encoding: .utf8)
        #expect(junit.contains(#"tests="2" failures="1""#), "\(junit)")
        #expect(junit.contains("<system-out>[[ATTACHMENT|all/cassettes/bad/meta.json]]</system-out>"), "\(junit)")
        let index = try String(contentsOf: all.appendingPathComponent("index.html"), encoding: .utf8)
        #expect(index.contains(#"<a href="good/report.html">good</a>"#), "\(index)")
        // The kept cassette travels with the joined report.
        #expect(index.contains(#"href="cassettes/bad">cassette</a>"#), "\(index)")
        #expect(FileManager.default.fileExists(atPath: all.appendingPathComponent("cassettes/bad/meta.json").path))
        for name in ["good", "bad"] {
            #expect(FileManager.default.fileExists(atPath: all.appendingPathComponent("\(name)/report.html").path))
        }
        let summary = try String(contentsOf: all.appendingPathComponent("summary.json"), encoding: .utf8)
        #expect(summary.contains(#""harnessYmlSha256" : ""#), "\(summary)")

        // A shard made from another harness.yml: refused, naming the folders; nothing is written.
        let second = project.appendingPathComponent("shard2/summary.json")
        let text = try String(contentsOf: second, encoding: .utf8)
        try text.replacingOccurrences(
            of: #""harnessYmlSha256" : ""#, with: #""harnessYmlSha256" : "0000"#
        ).write(to: second, atomically: true, encoding: .utf8)
        let refused = try await HarnessCommand.run(["report", "merge", "shard1", "shard2", "-o", "again"], in: project)
        #expect(refused.status == 2, "\(refused.transcript)")
        #expect(
            refused.standardError.contains("the reports come from different harness.yml contents"),
            "\(refused.transcript)")
        #expect(refused.standardError.contains("(shard1)") && refused.standardError.contains("(shard2)"))
        #expect(!FileManager.default.fileExists(atPath: project.appendingPathComponent("again").path))
    }
}
