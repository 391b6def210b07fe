import Foundation
import HarnessTimeline
import Testing

/// docs/event-kinds.md is what the catalogue says, and the catalogue names each kind once.
@Suite struct EventCatalogueTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func thePageIsGeneratedFromTheCatalogue() throws {
        let page = try String(contentsOf: Self.root.appendingPathComponent("docs/event-kinds.md"), encoding: .utf8)
        #expect(page == EventCatalogue.markdown(), "regenerate: swift run harness list --events > docs/event-kinds.md")
    }

    @Test func everyKindIsListedOnceWithDistinctAttributes() {
        let kinds = EventCatalogue.all.map(\.kind)
        #expect(Set(kinds).count == kinds.count, "a kind is listed twice")
        for spec in EventCatalogue.all {
            #expect(Set(spec.attributes).isDisjoint(with: spec.optional), "\(spec.kind)")
            #expect(!spec.meaning.isEmpty, "\(spec.kind)")
            #expect(EventCatalogue.spec(for: spec.kind) == spec)
        }
    }

    /// No component publishes a kind the catalogue does not know: every literal kind in Sources/ is in it,
    /// whether it opens a `publish(` call (its first argument, on the call's line or the lines after)
    /// or names an `EventKind` constant.
    @Test func everyKindPublishedInTheSourcesIsCatalogued() throws {
        let sources = Self.root.appendingPathComponent("Sources")
        let files =
            FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") } ?? []
        let known = Set(EventCatalogue.all.map(\.kind.rawValue))
        let kindPattern =
            #""((?:harness|service|backend|parse|apns|device|app|transfer|media|proxy|network)\.[a-zA-Z.]+)""#
        // A call's first argument, however the call is wrapped: `publish(` then blanks, then the literal.
        let call = try NSRegularExpression(pattern: #"publish\(\s*"# + kindPattern)
        let constant = try NSRegularExpression(pattern: #"EventKind = "# + kindPattern)
        var unknown: [String] = []
        var (calls, constants, declarations) = (0, 0, 0)
        for file in files where !file.hasSuffix("EventCatalogue.swift") {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            let range = NSRange(text.startIndex..., in: text)
            let found = (call.matches(in: text, range: range), constant.matches(in: text, range: range))
            calls += found.0.count
            constants += found.1.count
            declarations += text.components(separatedBy: "EventKind = \"").count - 1
            for match in found.0 + found.1 {
                let kind = (text as NSString).substring(with: match.range(at: 1))
                if !known.contains(kind) { unknown.append("\(file): \(kind)") }
            }
        }
        #expect(unknown.isEmpty, "\(unknown)")
        // The patterns found what they look for: every declared constant, and literal calls.
        #expect(constants == declarations && constants > 0)
        #expect(calls > 0)
    }
}
