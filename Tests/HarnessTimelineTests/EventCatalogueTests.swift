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

    /// No component publishes a kind the catalogue does not know: every literal kind in Sources/ is in it.
    @Test func everyKindPublishedInTheSourcesIsCatalogued() throws {
        let sources = Self.root.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") } ?? []
        let known = Set(EventCatalogue.all.map(\.kind.rawValue))
        let literal = try NSRegularExpression(pattern: #""((?:harness|parse|apns|device|app|transfer|media)\.[a-zA-Z.]+)""#)
        var unknown: [String] = []
        for file in files where !file.hasSuffix("EventCatalogue.swift") {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") where line.contains("publish(") || line.contains("EventKind = ") {
                let range = NSRange(line.startIndex..., in: line)
                for match in literal.matches(in: String(line), range: range) {
                    let kind = (String(line) as NSString).substring(with: match.range(at: 1))
                    if !known.contains(kind) { unknown.append("\(file): \(kind)") }
                }
            }
        }
        #expect(unknown.isEmpty, "\(unknown)")
    }
}
