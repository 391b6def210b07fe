import Foundation
import TestSupport
import Testing

/// Issue 32: `--record-failures DIR` records every run and keeps only the cassettes of the runs that
/// failed, linked from the batch's index.html and named in its JUnit report, each replaying alone.
@Suite struct RecordFailuresTests {
    @Test func aBatchWithOneFailureKeepsExactlyThatCassetteLinkedAndReplayable() async throws {
        let file = try ScenarioFixtures.writeConfiguration(
            ScenarioFixtures.header(media: "throttle: 2MB/s", device: "backgroundPushBudget: 5s")
                + ScenarioFixtures.buggyApp
                + "scenarios:\n" + ScenarioFixtures.photoScenario("good")
                + ScenarioFixtures.photoScenario("bad", app: "buggy", within: "20s"))
        let project = file.deletingLastPathComponent()
        let run = try await HarnessCommand.run(
            ["run", "good", "bad", "--record-failures", "cassettes", "--report-dir", "reports"], in: project)
        #expect(run.status == 1, "\(run.transcript)")
        let cassettes = project.appendingPathComponent("cassettes")
        #expect(try FileManager.default.contentsOfDirectory(atPath: cassettes.path) == ["bad"], "\(run.transcript)")
        #expect(run.standardOutput.contains("cassette: not kept (PASS;"), "\(run.transcript)")
        #expect(run.standardOutput.contains("    cassette: \(cassettes.path)/bad"), "\(run.transcript)")

        let reports = project.appendingPathComponent("reports")
        let junit = try String(contentsOf: reports.appendingPathComponent("junit.xml"), encoding: .utf8)
        #expect(junit.components(separatedBy: "<system-out>").count == 2, "\(junit)")
        #expect(junit.contains("<system-out>[[ATTACHMENT|cassettes/bad/meta.json]]</system-out>"), "\(junit)")
        let index = try String(contentsOf: reports.appendingPathComponent("index.html"), encoding: .utf8)
        #expect(index.contains(#"<a class="cassette" href="../cassettes/bad">cassette</a>"#), "\(index)")

        // The kept cassette replays alone, from another folder: the same failure, the same chain break.
        let broke = try #require(
            run.standardOutput.split(separator: "\n").first { $0.hasPrefix("The chain broke at link") },
            "\(run.transcript)")
        let elsewhere = try PackagePaths.temporaryDirectory("replay-failure")
        let replay = try await HarnessCommand.run(
            ["replay", cassettes.appendingPathComponent("bad").path, "--tolerance", "10", "--report-dir", "r"],
            in: elsewhere)
        #expect(replay.status == 0, "\(replay.transcript)")
        #expect(
            replay.standardOutput.contains(
                "replay: equivalent to the recording (the scenario ended FAIL, as recorded)"),
            "\(replay.transcript)")
        // The same link, the same event awaited after the same one (whose number on the timeline may differ).
        let link = String(broke.prefix { $0 != "(" })
        #expect(link.hasSuffix("after transfer.completed "), "\(broke)")
        #expect(replay.standardOutput.contains(link), "\(replay.transcript)")
    }

    @Test func recordAndRecordFailuresTogetherAreRefused() async throws {
        let both = try await HarnessCommand.run([
            "run", "silent-push-photo", "--record", "/tmp/a", "--record-failures", "/tmp/b",
        ])
        #expect(both.status == 2, "\(both.transcript)")
        #expect(both.standardError.contains("give one"), "\(both.transcript)")
    }
}
