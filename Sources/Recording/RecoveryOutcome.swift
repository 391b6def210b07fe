import Foundation

/// What became of one partial recording beside a cassette folder, with the sentence a command prints
/// about it.
public struct RecoveryOutcome: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Its journal became a cassette marked incomplete.
        case recovered
        /// It was a closed cassette that had not yet taken its folder's place: moved there whole.
        case moved
        /// Its process was gone and nothing of its recording had reached the disk: removed.
        case cleared
        /// Its process runs: a recording under way, left alone.
        case running
        /// Its name carries no process id, so it was left alone.
        case unowned
        /// Recovering or clearing it failed; it is where ``RecoveryOutcome/partial`` says.
        case failed
    }

    public var kind: Kind
    /// The partial's folder (after a failure, where it is now).
    public var partial: URL
    /// The process that made it, when its name says.
    public var pid: Int32?
    /// Where the cassette went, when one was recovered or moved.
    public var cassette: URL?
    /// What the recovery kept and dropped, when one was recovered.
    public var recovery: CassetteMeta.Recovery?
    /// The sentence to print.
    public var message: String

    public init(
        kind: Kind, partial: URL, pid: Int32?, cassette: URL? = nil, recovery: CassetteMeta.Recovery? = nil,
        message: String
    ) {
        self.kind = kind
        self.partial = partial
        self.pid = pid
        self.cassette = cassette
        self.recovery = recovery
        self.message = message
    }

    public var description: String { message }

    /// Whether the partial was dealt with (recovered, moved or cleared), rather than left.
    public var acted: Bool { [.recovered, .moved, .cleared].contains(kind) }
}
