/// docs/event-kinds.md, made from the catalogue (`harness list --events`).
extension EventCatalogue {
    /// The paragraph under the page's title.
    private static let introduction = [
        "Every component of the harness publishes events to the run's timeline. An event has a kind (the names",
        "below), a source (the component that published it) and attributes, whose values are all strings. In",
        "harness.yml, the step `waitFor: {event: device.app.state, where: {state: suspended}}` waits for an event",
        "of that kind whose attributes have those values, and the expectations name kinds the same way: `chain:`",
        "lists them in the order they must happen, each with the values it must carry, as in",
        "`- apns.delivered: {stored: \"true\"}`, and `eventually:`, `counts:` and `never:` name them too. An",
        "attribute with a trailing `?` is carried by only some events of its kind, and an event without an",
        "attribute that a pattern names does not match it. Each run's `timeline.jsonl` shows the events as they",
        "happened; docs/harness-yml.md describes the file. This page is generated from `EventCatalogue`",
        "(Sources/HarnessTimeline/EventCatalogue.swift): change the catalogue, then regenerate the page with",
        "`swift run harness list --events > docs/event-kinds.md`.",
        "",
        "In a scenario with several devices (`devices:` in harness.yml), every event a device publishes, for",
        "itself, its apps, its transfers and its push channel, also carries `device`: the device's name, as in",
        "`- app.localNotification: {device: bob}`. The tables below do not repeat it.",
    ]

    /// The page docs/event-kinds.md: a title, a paragraph on naming kinds in harness.yml, then a section per
    /// source with a table of its kinds; an attribute carried only sometimes has a trailing `?`.
    public static func markdown() -> String {
        var lines = ["# Event kinds", ""] + introduction + [""]
        var sources: [String] = []
        for spec in all where !sources.contains(spec.source) { sources.append(spec.source) }
        for source in sources {
            lines += ["## \(source)", ""]
            if let description = sourceDescriptions[source] { lines += [description, ""] }
            lines += ["| kind | attributes | meaning |", "| --- | --- | --- |"]
            for spec in all where spec.source == source {
                let names = spec.attributes.map { "`\($0)`" } + spec.optional.map { "`\($0)?`" }
                let listed = names.isEmpty ? "—" : names.joined(separator: ", ")
                lines.append("| `\(spec.kind.rawValue)` | \(cell(listed)) | \(cell(spec.meaning)) |")
            }
            lines.append("")
        }
        return lines.joined(separator: "\n")
    }

    /// A table cell's text: a `|` would end the cell.
    private static func cell(_ text: String) -> String {
        text.split(separator: "|", omittingEmptySubsequences: false).joined(separator: "\\|")
    }
}
