import Foundation
import TestSupport
import Testing

@testable import HarnessCore

/// Which report folders join, and the commit a run names: a row per rule.
@Suite struct ReportMergeTests {
    static func shard(_ folder: String, _ scenarios: [String], commit: String? = "abc", digest: String? = "d1")
        -> ReportMerge.Shard
    {
        let results = scenarios.map {
            RunResult(
                scenario: $0, outcome: .passed, verdict: nil, reportDirectory: URL(fileURLWithPath: "/r/\($0)"),
                duration: .seconds(2))
        }
        return ReportMerge.Shard(
            folder: folder,
            summary: BatchSummary(results: results, seconds: 10, parallel: 2, commit: commit, harnessYmlSha256: digest))
    }

    @Test func shardsOfOneWorldJoinInOrder() throws {
        let plan = try ReportMerge.plan([Self.shard("s1", ["a[3G]", "b[3G]"]), Self.shard("s2", ["a[LTE]"])]).get()
        #expect(plan.results.map(\.summary.scenario) == ["a[3G]", "b[3G]", "a[LTE]"])
        #expect(plan.results.map(\.folder) == ["s1", "s1", "s2"])
        #expect(plan.commit == "abc" && plan.harnessYmlSha256 == "d1" && plan.seconds == 10)
    }

    @Test(arguments: [
        (
            [shard("s1", ["a"]), shard("s2", ["b"], commit: "def")],
            "the reports come from different commits: abc (s1) and def (s2)"
        ),
        (
            [shard("s1", ["a"]), shard("s2", ["b"], digest: "d2"), shard("s3", ["c"])],
            "the reports come from different harness.yml contents (SHA-256): d1 (s1, s3) and d2 (s2)"
        ),
        (
            [shard("s1", ["a"]), shard("s2", ["a"])],
            "'a' is in both s1 and s2: a scenario or cell belongs to one shard"
        ),
        (
            [shard("s1", ["../../etc"])],
            "s1/summary.json: '../../etc' is not a scenario's name (a report folder's name inside s1)"
        ),
        ([shard("s1", [".."])], "s1/summary.json: '..' is not a scenario's name (a report folder's name inside s1)"),
    ])
    func foldersOfAnotherWorldOrTwiceTheSameScenarioAreRefused(_ shards: [ReportMerge.Shard], _ problem: String) {
        let error = #expect(throws: MergeError.self) { try ReportMerge.plan(shards).get() }
        #expect(error?.description == problem)
    }

    @Test(
        arguments: [
            ("cassettes/a[3G]", "cassettes/a[3G]"), ("/home/runner/.ssh/id_rsa", nil), ("../x", nil),
            ("cassettes/../../x", nil), ("a//b", nil), ("", nil),
        ] as [(String, String?)])
    func onlyACassetteInsideTheFolderIsCarried(_ path: String, _ carried: String?) {
        #expect(ReportMerge.carriedCassette(path) == carried)
    }

    @Test func theCommitIsTheEnvironmentsElseTheCheckoutsBranch() throws {
        let folder = try PackagePaths.temporaryDirectory("git")
        let git = folder.appendingPathComponent(".git")
        try FileManager.default.createDirectory(at: git, withIntermediateDirectories: true)
        try "ref: refs/heads/main\n".write(to: git.appendingPathComponent("HEAD"), atomically: true, encoding: .utf8)
        try "# pack-refs\n1111 refs/heads/other\n2222 refs/heads/main\n".write(
            to: git.appendingPathComponent("packed-refs"), atomically: true, encoding: .utf8)
        let inside = folder.appendingPathComponent("sub/dir")
        #expect(GitCommit.current(in: inside, environment: [:]) == "2222")
        #expect(GitCommit.current(in: inside, environment: ["GITHUB_SHA": "feed"]) == "feed")
        #expect(GitCommit.current(in: inside, environment: ["GITHUB_SHA": "feed", "HARNESS_COMMIT": "cafe"]) == "cafe")
        try FileManager.default.createDirectory(
            at: git.appendingPathComponent("refs/heads"), withIntermediateDirectories: true)
        try "3333\n".write(to: git.appendingPathComponent("refs/heads/main"), atomically: true, encoding: .utf8)
        #expect(GitCommit.current(in: inside, environment: [:]) == "3333")
    }
}
