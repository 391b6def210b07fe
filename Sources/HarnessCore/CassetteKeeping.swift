/// Which recorded cassettes a run keeps (`--record` or `--record-failures`). Pure.
public enum CassetteKeeping: Sendable, Equatable {
    /// Every one.
    case always
    /// Those of runs that failed (a surprise pass of a cell expected to fail is a failure) or could not
    /// run (an error): what a red CI cell needs to be replayed. A pass, a failure the matrix expected
    /// and an interrupted run leave none.
    case failuresOnly

    public func keeps(_ outcome: RunOutcome) -> Bool {
        switch (self, outcome) {
        case (.always, _), (.failuresOnly, .failed), (.failuresOnly, .setupError): true
        case (.failuresOnly, .passed), (.failuresOnly, .expectedFailure), (.failuresOnly, .interrupted),
            (.failuresOnly, .skipped):
            false
        }
    }
}
