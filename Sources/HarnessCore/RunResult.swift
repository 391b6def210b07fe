import Foundation
import Recording

/// How a scenario run ended.
public enum RunOutcome: Sendable, Equatable {
    case passed
    /// The app or the chain did not do what the scenario expects.
    case failed(String)
    /// Ctrl-C or SIGTERM stopped the run.
    case interrupted
    /// The run could not be set up (configuration, ports): not a verdict on the app.
    case setupError(String)
    /// The batch was interrupted before this scenario started: it never ran.
    case skipped
    /// A matrix cell the scenario declares it fails under, and it failed: not a surprise.
    case expectedFailure(String)

    /// 0 pass, 1 a scenario failed, 2 usage or configuration error, 130 interrupted.
    public var exitCode: Int32 {
        switch self {
        case .passed, .expectedFailure: 0
        case .failed: 1
        case .setupError: 2
        case .interrupted, .skipped: 130
        }
    }

    public var label: String {
        switch self {
        case .passed: "PASS"
        case .failed: "FAIL"
        case .interrupted: "INTERRUPTED"
        case .setupError: "ERROR"
        case .skipped: "SKIPPED"
        case .expectedFailure: "XFAIL"
        }
    }
}

/// A cell of a network matrix: a scenario run under a profile (`none` for no profile).
public struct MatrixCell: Sendable, Equatable {
    public var scenario: String
    public var profile: String
}

public struct RunResult: Sendable {
    public var scenario: String
    public var outcome: RunOutcome
    public var verdict: ChainVerdict?
    public var reportDirectory: URL
    public var duration: Duration
    /// Why it failed, in words: the broken link, what came instead, the last events.
    public var explanation: String = ""
    /// For a replay: where the run left the recorded timeline; nil when the two are equivalent.
    public var divergence: TimelineComparison.Divergence?
    /// For a replay: the outcome the scenario itself had this time (`PASS`, `FAIL`), beside the recorded
    /// one, since a replay's own outcome is whether it matched the recording.
    public var replayedVerdict: (recorded: String, now: String)?
    /// For a cell of a network matrix: its scenario and profile.
    public var cell: MatrixCell?
    /// The cassette the run was recorded into, when it is kept.
    public var cassette: URL?

    public var seconds: Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
