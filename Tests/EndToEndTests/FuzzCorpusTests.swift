import Foundation
import TestSupport
import Testing

/// Every fuzz target's corpus (seeds, and inputs that crashed once) goes through its target again
/// without crashing: the fuzzer's finds stay regression tests.
@Suite struct FuzzCorpusTests {
    static let targets = [
        "provider-request", "provider-http2", "legacy-gateway", "media-request", "control-json", "parse-push",
        "parse-where", "toxiproxy-json", "cassette", "harness-yml", "device-message",
    ]

    @Test(arguments: targets)
    func theCorpusReplaysWithoutACrash(_ target: String) async throws {
        let replay = PackagePaths.binaries.appendingPathComponent("harness-fuzzer").path
        try #require(FileManager.default.isExecutableFile(atPath: replay), "build first: swift build (ci/test does)")
        let corpus = PackagePaths.root.appendingPathComponent("Tests/Fuzz/\(target)")
        let count = try FileManager.default.contentsOfDirectory(atPath: corpus.path).count
        #expect(count > 0, "\(corpus.path) holds no seeds")
        let result = try await ChildProcess.run(replay, [target, corpus.path])
        #expect(result.status == 0, "\(result.transcript)")
        #expect(result.standardOutput.contains("replayed \(count) inputs"), "\(result.transcript)")
    }

    /// The list above and the fuzzer's own agree, so a new target cannot go without its corpus test.
    @Test func everyTargetHasACorpus() async throws {
        let replay = PackagePaths.binaries.appendingPathComponent("harness-fuzzer").path
        let usage = try await ChildProcess.run(replay, [])
        #expect(usage.status == 2)
        #expect(usage.standardError.contains("targets: \(Self.targets.joined(separator: ", "))"), "\(usage.transcript)")
        let folders = try FileManager.default.contentsOfDirectory(
            atPath: PackagePaths.root.appendingPathComponent("Tests/Fuzz").path)
        #expect(Set(folders) == Set(Self.targets))
    }
}
