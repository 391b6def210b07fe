import Foundation
import TestSupport
import Testing

/// FakeAPNs's delivery rules with a real simulated device going offline and online: each catalogue
/// scenario's own chain and `never` list are the assertions, checked by the harness run.
@Suite struct DeliveryScenarioTests {
    @Test(arguments: ["offline-store-and-forward", "offline-expiry", "alert-collapse", "priority-5-coalesced"])
    func scenarioPasses(_ scenario: String) async throws {
        let harness = PackagePaths.binaries.appendingPathComponent("harness").path
        try #require(FileManager.default.isExecutableFile(atPath: harness), "build first: swift build (ci/test does)")
        let reports = try PackagePaths.temporaryDirectory()
        let result = try await ChildProcess.run(
            harness, ["run", scenario, "--ephemeral-ports", "--skip-build", "--report-dir", reports.path],
            currentDirectory: PackagePaths.root)
        #expect(result.status == 0, "\(result.transcript)")
        #expect(result.standardOutput.contains("PASS \(scenario)"))
        let timeline = try String(contentsOf: reports.appendingPathComponent("timeline.jsonl"), encoding: .utf8)
        #expect(!timeline.isEmpty)
    }
}
