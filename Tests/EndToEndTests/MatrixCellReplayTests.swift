import Foundation
import TestSupport
import Testing

/// Issue 32: a matrix cell's cassette could not be replayed ("the cassette replays scenario
/// 'x[3G]', which harness.yml does not have"), and a replay read the project's harness.yml and the
/// original apps whatever the recording had run. A cassette now keeps how its run was made: the
/// harness.yml it read, the cell, the apps, the folder.
@Suite struct MatrixCellReplayTests {
    static let tolerance = ["--tolerance", "10"]

    /// A scenario file in a new folder: the reference app, and a build of it that never completes the
    /// background fetch (`buggy`).
    func configuration() throws -> URL {
        try ScenarioFixtures.writeConfiguration(
            ScenarioFixtures.header(media: "throttle: 2MB/s", device: "backgroundPushBudget: 5s")
                + ScenarioFixtures.buggyApp
                + "scenarios:\n" + ScenarioFixtures.photoScenario("photo"))
    }

    @Test func aCellRecordedInOneFolderReplaysFromAnotherWithTheCassetteAlone() async throws {
        let file = try configuration()
        let project = file.deletingLastPathComponent()
        let cassettes = project.appendingPathComponent("cassettes")
        let recording = try await HarnessCommand.run([
            "run", "photo", "--config", file.path, "--network", "LTE,none", "--record", cassettes.path,
            "--report-dir", project.appendingPathComponent("recorded").path,
        ])
        #expect(recording.status == 0, "\(recording.transcript)")
        let cell = cassettes.appendingPathComponent("photo[LTE]")
        let meta = try String(contentsOf: cell.appendingPathComponent("meta.json"), encoding: .utf8)
        #expect(meta.contains(#""network" : "LTE""#) && meta.contains(#""version" : 2"#), "\(meta)")
        // The scenario file is gone and the replay runs elsewhere: the cassette's copy is what it reads.
        try FileManager.default.removeItem(at: file)
        let elsewhere = try PackagePaths.temporaryDirectory("elsewhere")

        let replay = try await HarnessCommand.run(
            ["replay", cell.path, "--report-dir", elsewhere.appendingPathComponent("same").path] + Self.tolerance,
            in: elsewhere)
        #expect(replay.status == 0, "\(replay.transcript)")
        #expect(replay.standardOutput.contains("harness replay photo[LTE] from \(cell.path)"), "\(replay.transcript)")
        #expect(replay.standardOutput.contains("replay: equivalent to the recording"), "\(replay.transcript)")
        #expect(!replay.standardOutput.contains("overridden:"), "\(replay.transcript)")

        let buggy = try await HarnessCommand.run(
            [
                "replay", cell.path, "--app", "nasa-tv=buggy", "--report-dir",
                elsewhere.appendingPathComponent("buggy").path,
            ]
                + Self.tolerance, in: elsewhere)
        #expect(buggy.status == 1, "\(buggy.transcript)")
        #expect(
            buggy.standardOutput.contains("overridden: --app nasa-tv=buggy in place of the scenario's own apps"),
            "\(buggy.transcript)")
        #expect(
            buggy.standardOutput.contains("replay: the first divergence from the recording:"), "\(buggy.transcript)")

        // A scenario file whose app is not where it says: refused before anything starts, naming it.
        let moved = elsewhere.appendingPathComponent("moved.yml")
        let text = try String(contentsOf: cell.appendingPathComponent("harness.yml"), encoding: .utf8)
        try text.replacingOccurrences(of: "[" + ScenarioFixtures.nasaTV + "]", with: "[bin/nasa-tv]").write(
            to: moved, atomically: true, encoding: .utf8)
        let missing = try await HarnessCommand.run(["replay", cell.path, "-c", moved.path], in: elsewhere)
        #expect(missing.status == 2, "\(missing.transcript)")
        #expect(
            missing.standardError.contains(
                "the app 'nasa-tv' runs 'bin/nasa-tv', which is not an executable file in \(elsewhere.path)"),
            "\(missing.transcript)")
    }
}
