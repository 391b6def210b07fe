import Foundation
import Testing

@testable import HarnessCore

/// Which cassettes a run keeps, and how the reports name them: a row per rule.
@Suite struct CassetteKeepingTests {
    @Test(arguments: [
        (RunOutcome.passed, true, false), (.failed("x"), true, true), (.setupError("x"), true, true),
        (.expectedFailure("x"), true, false), (.interrupted, true, false), (.skipped, true, false),
    ])
    func recordKeepsEveryOneAndRecordFailuresThoseOfFailedRuns(_ outcome: RunOutcome, _ always: Bool, _ failed: Bool) {
        #expect(CassetteKeeping.always.keeps(outcome) == always)
        #expect(CassetteKeeping.failuresOnly.keeps(outcome) == failed)
    }

    @Test(arguments: [
        ("/work/ci/cassettes/a[3G]", "/work/ci", "cassettes/a[3G]"),
        ("/work/ci/cassettes/a", "/work/ci/", "cassettes/a"),
        ("/elsewhere/a", "/work/ci", "/elsewhere/a"),
        ("/work/cix/a", "/work/ci", "/work/cix/a"),
    ])
    func anAttachmentIsNamedFromTheWorkspaceWhenItIsInside(_ cassette: String, _ folder: String, _ path: String) {
        #expect(RunReport.path(of: URL(fileURLWithPath: cassette), from: folder) == path)
    }

    @Test(arguments: [
        ("/w/cassettes/a[3G]", "/w/reports", "../cassettes/a%5B3G%5D"),
        ("/w/reports/c/x", "/w/reports", "c/x"),
        ("/other/c", "/w/reports", "../../other/c"),
    ])
    func indexLinksACassetteRelatively(_ cassette: String, _ folder: String, _ href: String) {
        #expect(RunReport.href(to: URL(fileURLWithPath: cassette), from: URL(fileURLWithPath: folder)) == href)
    }

    @Test func aFailedCaseNamesItsCassetteInSystemOut() {
        var failed = RunResult(
            scenario: "a[3G]", outcome: .failed("broke"), verdict: nil, reportDirectory: URL(fileURLWithPath: "/r"),
            duration: .seconds(1))
        failed.cassette = URL(fileURLWithPath: "/w/cassettes/a[3G]")
        var passed = failed
        passed.outcome = .passed
        let junit = RunReport.junit([failed, passed], time: 2, workingDirectory: "/w")
        #expect(
            junit.components(separatedBy: "<system-out>[[ATTACHMENT|cassettes/a[3G]/meta.json]]</system-out>").count
                == 2)
    }
}
