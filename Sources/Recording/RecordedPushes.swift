import Foundation
import HarnessTimeline

/// The pushes a cassette recorded the scenario's `push` steps sending (`POST …/push` to Parse,
/// `backend→parse`), in the order they were sent, each with its body and when it was sent: what a
/// replay's steps send again, at the same moments.
public struct RecordedPushes: Sendable, Equatable {
    public struct Push: Sendable, Equatable {
        /// Milliseconds from the cassette's start.
        public var offset: Double
        /// The request body as it was recorded (Parse's push JSON: `where`/`channels` and `data`).
        public var body: Data
        /// Which entry of `traffic.har` it came from.
        public var entry: Int

        /// What in the push's `where` names one device of the recording (`deviceToken`,
        /// `installationId`, `objectId`), which a replay's devices do not share; nil when nothing does.
        public var namedDevice: String? {
            guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
                let query = object["where"] as? [String: Any]
            else { return nil }
            return ["deviceToken", "installationId", "objectId"].first { query[$0] != nil }
        }
    }

    public let pushes: [Push]

    /// The pushes of `push` steps: those whose `User-Agent` says they are the harness's own. In a
    /// cassette where none says so (recorded before the harness marked them), every `backend→parse` push.
    public init(entries: [HAR.Entry]) {
        let all = entries.enumerated().compactMap { index, entry -> (Push, own: Bool)? in
            guard entry.link == "backend→parse", entry.request.method == "POST",
                let path = URLComponents(string: entry.request.url)?.path, path.hasSuffix("/push"),
                let text = entry.request.postData?.text
            else { return nil }
            let own = (entry.requestHeader("user-agent") ?? "").hasPrefix(BackendScript.harnessUserAgent)
            return (Push(offset: max(entry.offset ?? 0, 0), body: Data(text.utf8), entry: index), own)
        }
        // A backend's push is the backend's (or its stand-in's) to send again, not a step's.
        let marked = all.contains { $0.own }
        pushes = all.filter { !marked || $0.own }.map(\.0).sorted { $0.offset < $1.offset }
    }
}

/// A replay's way through a cassette's pushes: the next one to send and the moment it is due, on a
/// clock that started where the recording's did.
public final class PushSchedule: Sendable {
    public let recorded: RecordedPushes
    private let start: ContinuousClock.Instant
    private let next = LockedCounter()

    public init(_ recorded: RecordedPushes, startingAt start: ContinuousClock.Instant) {
        self.recorded = recorded
        self.start = start
    }

    /// The next recorded push and when it is due; nil once every one has been taken.
    public func take() -> (push: RecordedPushes.Push, due: ContinuousClock.Instant)? {
        let index = next.increment()
        guard index < recorded.pushes.count else { return nil }
        let push = recorded.pushes[index]
        // The reader bounds offsets (10^12 ms at most), well inside what an instant can add.
        return (push, start.advanced(by: .milliseconds(Int64(push.offset.rounded()))))
    }

    /// How many of the recorded pushes have been taken.
    public var taken: Int { min(next.value, recorded.pushes.count) }
}

/// A counter shared by the tasks of a replay.
final class LockedCounter: Sendable {
    private let state = LockedState(0)

    /// The value before adding one.
    func increment() -> Int {
        state.withLock { value in
            defer { value += 1 }
            return value
        }
    }

    var value: Int { state.withLock { $0 } }
}
