import Foundation

/// One thing that happened during a run, published by whichever component saw it.
///
/// Events are deliberately flat: a `kind` from the catalogue in ``EventKind`` and string attributes.
/// That keeps `timeline.jsonl` readable by any tool and lets expectations match on fields without
/// knowing the producer's types.
public struct TimelineEvent: Sendable, Codable, Equatable {
    /// Position in the run's single ordered stream, starting at 1.
    public var sequence: Int
    /// Seconds since the timeline was created.
    public var elapsed: Double
    /// Wall-clock time, for humans reading reports.
    public var date: Date
    public var kind: EventKind
    /// The component that published the event (`parse`, `apns`, `device`, `app`, `media`, `harness`).
    public var source: String
    public var attributes: EventAttributes

    public init(
        sequence: Int, elapsed: Double, date: Date, kind: EventKind, source: String, attributes: EventAttributes
    ) {
        self.sequence = sequence
        self.elapsed = elapsed
        self.date = date
        self.kind = kind
        self.source = source
        self.attributes = attributes
    }

    public subscript(attribute: String) -> String? { attributes[attribute] }
}
