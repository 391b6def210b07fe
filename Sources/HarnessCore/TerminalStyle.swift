/// Colours for the live view when it goes to a terminal: verdicts green or red, each event's kind in
/// its component's colour. Plain text when the output is a file or a pipe, or `NO_COLOR` is set.
public enum TerminalStyle {
    static let reset = "\u{1B}[0m"
    static let componentColours: [(prefix: String, code: String)] = [
        ("parse.", "34"), ("apns.", "35"), ("device.", "36"), ("transfer.", "33"), ("app.", "32"), ("media.", "90"),
        ("harness.", "1"),
    ]

    /// Whether to colour: a terminal on standard output and no `NO_COLOR` (https://no-color.org).
    public static func shouldColour(isTerminal: Bool, environment: [String: String]) -> Bool {
        isTerminal && (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
    }

    /// `line` with ANSI colours for a terminal.
    public static func colour(_ line: String) -> String {
        func paint(_ text: Substring, _ code: String) -> String { "\u{1B}[\(code)m\(text)\(reset)" }
        if line.hasPrefix("PASS ") { return paint(line[...], "32;1") }
        if line.hasPrefix("FAIL ") || line.hasPrefix("ERROR ") || line.hasPrefix("INTERRUPTED ") {
            return paint(line[...], "31;1")
        }
        if line.hasPrefix("  ✓ ") { return paint(line[...], "32") }
        if line.hasPrefix("  ✗ ") { return paint(line[...], "31") }
        // An event line: "   1.234s  kind  attributes"; the kind gets its component's colour.
        let trimmed = line.drop { $0 == " " }
        guard let secondsEnd = trimmed.firstIndex(of: " "), trimmed[..<secondsEnd].hasSuffix("s") else { return line }
        let rest = trimmed[secondsEnd...].drop { $0 == " " }
        guard let kindEnd = rest.firstIndex(of: " ") ?? Optional(rest.endIndex),
            let colour = componentColours.first(where: { rest[..<kindEnd].hasPrefix($0.prefix) })?.code
        else { return line }
        return String(line[..<rest.startIndex]) + paint(rest[..<kindEnd], colour) + rest[kindEnd...]
    }
}
