/// What becomes of the partial recordings found beside a cassette folder, decided before anything is
/// touched: a partial whose process still runs is a recording under way and is left alone; one whose
/// process is gone is recovered into a cassette when anything of it reached the disk, and cleared when
/// nothing did. A recovery never lands on a cassette: it goes into the cassette folder only when that
/// holds nothing and the command is not about to record into it, and otherwise into a new folder beside
/// it, `DIR.recovered-<pid>`.
public struct RecoveryPlan: Sendable, Equatable {
    /// What the command finding the partials is about to do with the cassette folder.
    public enum Purpose: Sendable, Equatable {
        /// Record into it: its own recording takes the folder's place when it closes, so a recovery
        /// goes beside it.
        case recording
        /// Replay it: a recovery may become the cassette replayed.
        case replaying
    }

    /// Why a partial is left where it is.
    public enum Reason: Sendable, Equatable {
        /// Its process is running: the recording is under way.
        case running(pid: Int32)
        /// Its name carries no process id (a harness from before names did), so whether its recording
        /// is under way cannot be told.
        case noProcessID
    }

    /// Where a recovered cassette goes.
    public enum Destination: Sendable, Equatable {
        /// The cassette folder itself.
        case directory
        /// A new folder of this name beside the cassette folder.
        case beside(String)
    }

    public enum Step: Sendable, Equatable {
        case leave(PartialRecording, Reason)
        case recover(PartialRecording, into: Destination)
        /// Its process is gone and nothing of its recording reached the disk.
        case clear(PartialRecording)
    }

    /// One step a partial, newest first.
    public var steps: [Step]

    /// The plan for `partials`, found beside the cassette folder named `directory`.
    ///
    /// - Parameters:
    ///   - directoryIsFree: the cassette folder does not exist or is empty (no cassette, none of the
    ///     user's files).
    ///   - siblings: every name beside the cassette folder, so a new folder takes none of them.
    ///   - isAlive: whether a process runs (`kill(pid, 0)` in use; a rule in tests).
    public static func decide(
        _ partials: [PartialRecording], directory: String, directoryIsFree: Bool, purpose: Purpose,
        siblings: Set<String>, isAlive: (Int32) -> Bool
    ) -> RecoveryPlan {
        var free = directoryIsFree && purpose == .replaying
        var taken = siblings
        var steps: [Step] = []
        let newestFirst = partials.sorted { ($0.modified, $1.name) > ($1.modified, $0.name) }
        for partial in newestFirst {
            guard let pid = partial.pid else {
                steps.append(.leave(partial, .noProcessID))
                continue
            }
            if isAlive(pid) {
                steps.append(.leave(partial, .running(pid: pid)))
            } else if !partial.holdsRecording {
                steps.append(.clear(partial))
            } else if free {
                free = false
                steps.append(.recover(partial, into: .directory))
            } else {
                let name = besideName(directory: directory, pid: pid, tag: partial.tag, taken: taken)
                taken.insert(name)
                steps.append(.recover(partial, into: .beside(name)))
            }
        }
        return RecoveryPlan(steps: steps)
    }

    /// `DIR.recovered-<pid>`, or with the partial's tag (and then a number) when that name is taken.
    static func besideName(directory: String, pid: Int32, tag: String, taken: Set<String>) -> String {
        let plain = "\(directory).recovered-\(pid)"
        if !taken.contains(plain) { return plain }
        let tagged = "\(plain)-\(tag)"
        var name = tagged
        var number = 2
        while taken.contains(name) {
            name = "\(tagged)-\(number)"
            number += 1
        }
        return name
    }
}
