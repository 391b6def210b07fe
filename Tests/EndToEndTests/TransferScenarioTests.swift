import Foundation
import TestSupport
import Testing

/// A scenario that expects a resume from a server that cannot give one fails, and says why.
@Suite struct TransferScenarioTests {
    @Test func expectingAResumeFromAServerWithoutRangesFailsAtTheInterruption() async throws {
        let header = ScenarioFixtures.header(
            media: "throttle: 400KB/s", device: "suspendAfterBackground: 200ms, transferRetryDelay: 100ms")
        let file = try ScenarioFixtures.writeConfiguration(
            header + """
                scenarios:
                  resume-expected:
                    media:
                      faults:
                        - {fault: ignoreRange, path: /photos/*}
                        - {fault: reset, afterBytes: 200000, path: /photos/*, count: 1}
                    steps:
                \(ScenarioFixtures.silentPushSteps(indent: 6))
                    expect:
                      within: 10s
                      chain:
                        - transfer.interrupted: {next: resume from byte 200000}
                        - transfer.completed
                """)
        let result = try await HarnessCommand.run(["run", "resume-expected", "--config", file.path])
        #expect(result.status == 1, "\(result.transcript)")
        #expect(result.standardOutput.contains("FAIL resume-expected"), "\(result.transcript)")
        #expect(result.standardOutput.contains("why=the server sent no Accept-Ranges: bytes"), "\(result.transcript)")
        #expect(result.standardOutput.contains("transfer.restarted"), "\(result.transcript)")
    }
}
