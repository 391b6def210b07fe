import ArgumentParser
import Foundation
import HarnessCore
import HarnessTimeline
import Recording

struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare two runs' timelines and name the first point where they part.",
        discussion: """
            Each side is a report folder, a cassette folder, or a timeline.jsonl file. What must differ \
            between runs (identifiers, tokens, ports, paths, absolute times) is left out. Exit 0 when \
            equivalent, 1 with the first divergence, 2 when a timeline cannot be read.
            """)

    @Argument(help: "The first run (the reference).")
    var first: String

    @Argument(help: "The second run.")
    var second: String

    @Option(help: "How many seconds an event's distance from the event before it may move.")
    var tolerance: Double = TimelineComparison.Options().tolerance

    func run() throws {
        guard tolerance.isFinite, (0...3600).contains(tolerance) else {
            fail("--tolerance takes seconds from 0 to 3600, not \(tolerance)", code: 2)
        }
        let expected = read(first)
        let actual = read(second)
        var options = TimelineComparison.Options()
        options.tolerance = tolerance
        guard let divergence = TimelineComparison.compare(expected: expected, actual: actual, options: options) else {
            say("equivalent: \(expected.count) and \(actual.count) events, none out of place")
            return
        }
        say(DivergenceFormatter.text(divergence, expected: expected, actual: actual))
        throw ExitCode(1)
    }

    private func read(_ path: String) -> [TimelineEvent] {
        var url = URL(fileURLWithPath: path)
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder), isFolder.boolValue {
            url = url.appendingPathComponent("timeline.jsonl")
        }
        do {
            return try TimelineFile.read(url)
        } catch let error as CassetteError {
            fail(error.description, code: 2)
        } catch {
            fail("\(url.path): \(error)", code: 2)
        }
    }
}
