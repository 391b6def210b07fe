import Foundation
import TestSupport
import Testing

/// `harness run --network`: scenarios × profiles as cells named `scenario[profile]`, whose JUnit
/// report, index table, summary and exit code agree with what each cell did: a pass, a failure the
/// scenario declares (XFAIL), and a declared failure that passed (the surprise that fails the matrix).
@Suite struct NetworkMatrixTests {
    @Test func theMatrixReportsEachCellAndFailsOnlyOnSurprises() async throws {
        var text = try String(contentsOf: PackagePaths.root.appendingPathComponent("harness.yml"), encoding: .utf8)
        func replace(_ old: String, _ new: String) throws {
            try #require(text.components(separatedBy: old).count == 2, "'\(old)' once in harness.yml")
            text = text.replacingOccurrences(of: old, with: new)
        }
        // A profile of the file's own, too slow for the photo in 8 s; one scenario declares it fails
        // under it, another declares (wrongly) that it fails without a profile.
        try replace(
            "    launchTimeout: 20s\n",
            "    launchTimeout: 20s\n  network:\n    profiles:\n      glacial: {down: {bandwidth: 8kbps}}\n")
        try replace(
            "    description: the push's photoTitle \"Nebula\" becomes the photo screen's title\n",
            "    description: the push's photoTitle \"Nebula\" becomes the photo screen's title\n"
                + "    expectFailure: {glacial: the photo takes 55 s at 8 kbit/s}\n")
        let title = try #require(text.range(of: "  silent-push-photo-title:"))
        let within = try #require(text.range(of: "within: 30s", range: title.upperBound..<text.endIndex))
        text.replaceSubrange(within, with: "within: 8s")
        try replace(
            "    description: locking the device sends the app on screen",
            "    expectFailure: {none: declared wrongly on purpose}\n    description: locking the device sends the app on screen"
        )
        let file = PackagePaths.root.appendingPathComponent("harness.matrix-test.yml")
        try text.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }

        let reports = try PackagePaths.temporaryDirectory("matrix")
        let result = try await HarnessCommand.run([
            "run", "silent-push-photo-title", "lock-and-unlock", "--network", "none,glacial", "--config", file.path,
            "--parallel", "2", "--skip-build", "--report-dir", reports.path,
        ])
        // One surprise: exit 1.
        #expect(result.status == 1, "\(result.transcript)")
        #expect(result.standardOutput.contains("2 of 4 scenarios passed, 1 failed as expected"), "\(result.transcript)")

        let cells = [
            ("silent-push-photo-title[none]", "PASS"), ("silent-push-photo-title[glacial]", "XFAIL"),
            ("lock-and-unlock[none]", "FAIL"), ("lock-and-unlock[glacial]", "PASS"),
        ]
        let junit = try String(contentsOf: reports.appendingPathComponent("junit.xml"), encoding: .utf8)
        #expect(junit.contains(#"tests="4" failures="1" errors="0" skipped="1""#), "\(junit)")
        for (name, outcome) in cells {
            let testcase = try #require(
                junit.components(separatedBy: "<testcase ").first { $0.contains(#"name="\#(name)""#) }, "\(junit)")
            switch outcome {
            case "XFAIL":
                #expect(testcase.contains("<skipped message=\"expected to fail under glacial (the photo takes 55 s"))
            case "FAIL":
                #expect(
                    testcase.contains(
                        "<failure message=\"passed under none, where it is expected to fail (declared wrongly on purpose)"
                    ))
            default:
                #expect(!testcase.contains("<failure") && !testcase.contains("<skipped"), "\(testcase)")
            }
        }
        // The table: scenarios down, profiles across, each cell its outcome linking its report.
        let index = try String(contentsOf: reports.appendingPathComponent("index.html"), encoding: .utf8)
        #expect(index.contains("<thead><tr><th>scenario</th><th>none</th><th>glacial</th></tr></thead>"), "\(index)")
        for (name, outcome) in cells {
            let link = name.replacingOccurrences(of: "[", with: "%5B").replacingOccurrences(of: "]", with: "%5D")
            #expect(index.contains("<a href=\"\(link)/report.html\">\(outcome)</a></td>"), "\(name) in \(index)")
            #expect(FileManager.default.fileExists(atPath: reports.appendingPathComponent("\(name)/report.html").path))
        }
        let summary = try #require(
            JSONSerialization.jsonObject(with: Data(contentsOf: reports.appendingPathComponent("summary.json")))
                as? [String: Any])
        #expect(summary["failed"] as? [String] == ["lock-and-unlock[none]"])
        #expect(summary["expectedFailures"] as? [String] == ["silent-push-photo-title[glacial]"])
        // The glacial cells ran under the profile: their links said so on the timeline.
        let timeline = try String(
            contentsOf: reports.appendingPathComponent("lock-and-unlock[glacial]/timeline.jsonl"), encoding: .utf8)
        #expect(timeline.contains(#""condition":"glacial","link":"app-parse""#))
    }

    @Test(arguments: [
        (["--network", "5G"], "--network: unknown network profile '5G'; profiles: 3G, DSL, EDGE"),
        (["--network", "EDGE,edge"], "--network names EDGE twice"),
    ])
    func badProfilesExit2NamingThem(_ arguments: [String], _ message: String) async throws {
        let result = try await HarnessCommand.run(["run", "silent-push-photo", "--skip-build"] + arguments)
        #expect(result.status == 2, "\(result.transcript)")
        #expect(result.standardError.contains(message), "\(result.transcript)")
    }
}
