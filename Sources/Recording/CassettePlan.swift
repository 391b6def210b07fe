/// What a record mode means for one cassette path, decided before anything starts: whether the media
/// server answers from the cassette, whether it forwards to its upstream (or serves its folder), and
/// whether it records, fresh or adding to what is there. vcrpy's rules, with an upstream that may be
/// absent (then the media server's own folder is what gets recorded).
public struct CassettePlan: Sendable, Equatable {
    public enum Recording: Sendable, Equatable {
        case none
        /// A new cassette, replacing any there.
        case fresh
        /// The existing cassette, with what is new added (`new_episodes`).
        case adding
    }

    /// Answer from the cassette.
    public var replays: Bool
    /// Requests the cassette cannot answer go to the upstream (or the folder, without one).
    public var passesThrough: Bool
    public var recording: Recording

    public init(replays: Bool, passesThrough: Bool, recording: Recording) {
        self.replays = replays
        self.passesThrough = passesThrough
        self.recording = recording
    }

    /// The plan for `mode`, given whether the cassette exists and an upstream is set.
    ///
    /// - Returns: the plan, or a sentence saying why the combination cannot work.
    public static func decide(mode: RecordMode, cassetteExists: Bool, hasUpstream: Bool) -> Result<
        CassettePlan, PlanRefusal
    > {
        switch (mode, cassetteExists) {
        case (.none, true), (.once, true):
            return .success(CassettePlan(replays: true, passesThrough: false, recording: .none))
        case (.none, false):
            return .failure(.nothingToReplay)
        case (.once, false), (.all, _), (.newEpisodes, false):
            return .success(CassettePlan(replays: false, passesThrough: true, recording: .fresh))
        case (.newEpisodes, true):
            guard hasUpstream else {
                return .failure(.addingNeedsAnUpstream)
            }
            return .success(CassettePlan(replays: true, passesThrough: true, recording: .adding))
        }
    }
}

/// A record mode that cannot work as asked.
public enum PlanRefusal: Error, Equatable, CustomStringConvertible {
    /// `none` with no cassette: nothing to replay.
    case nothingToReplay
    /// `new_episodes` with no upstream to forward what the cassette lacks to.
    case addingNeedsAnUpstream

    public var description: String {
        switch self {
        case .nothingToReplay: "record mode none replays a cassette, and there is none to replay"
        case .addingNeedsAnUpstream: "record mode new_episodes forwards what the cassette lacks: it needs an upstream"
        }
    }
}
