import Foundation
import TestSupport
import Testing

/// Every input in the fuzz corpus (seeds and crashes found once) goes through the validator, the token
/// verifier and the certificate reader again without crashing.
@Suite struct FuzzCorpusTests {
    @Test func theCorpusReplaysWithoutACrash() async throws {
        let replay = PackagePaths.binaries.appendingPathComponent("provider-request-fuzzer").path
        try #require(FileManager.default.isExecutableFile(atPath: replay), "build first: swift build (ci/test does)")
        let corpus = PackagePaths.root.appendingPathComponent("Tests/Fuzz/corpus")
        let count = try FileManager.default.contentsOfDirectory(atPath: corpus.path).count
        let result = try await ChildProcess.run(replay, [corpus.path])
        #expect(result.status == 0, "\(result.transcript)")
        #expect(result.standardOutput.contains("replayed \(count) inputs"))
    }
}
