import Foundation
import HarnessTimeline

/// Writes the live view. On a terminal, a transfer's progress bar is redrawn in place, one line that
/// fills as the bytes arrive, and the next event starts a line below it; lines are coloured by
/// component. Into a file or a pipe (CI logs, tests), every line is written whole, progress included,
/// without colour.
public final class LiveView: Sendable {
    private let terminal: Bool
    private let colour: Bool
    private let write: @Sendable (String) -> Void
    /// Whether the cursor sits at the end of a progress bar that the next progress line replaces.
    private let inProgressLine = LockedState(false)

    public init(terminal: Bool, colour: Bool, write: @escaping @Sendable (String) -> Void) {
        self.terminal = terminal
        self.colour = colour
        self.write = write
    }

    public func say(_ text: String) {
        let styled =
            colour
            ? text.split(separator: "\n", omittingEmptySubsequences: false).map { TerminalStyle.colour(String($0)) }
                .joined(separator: "\n")
            : text
        inProgressLine.withLock { inProgress in
            guard terminal else { return write(styled + "\n") }
            if EventFormatter.isProgressLine(text) {
                // Erase the bar drawn last and draw the new one; the cursor stays at its end.
                write((inProgress ? "\r\u{1B}[2K" : "") + styled)
                inProgress = true
            } else {
                write((inProgress ? "\n" : "") + styled + "\n")
                inProgress = false
            }
        }
    }
}
