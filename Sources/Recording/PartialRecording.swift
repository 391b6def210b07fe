import Foundation

/// A folder a recording into `DIR` writes in until it closes, `.DIR.recording-<pid>-<tag>` beside
/// `DIR`, as found there: whose it is and what it holds. A process killed with SIGKILL leaves it
/// behind; ``RecoveryPlan`` decides what becomes of it.
public struct PartialRecording: Sendable, Equatable {
    /// The folder's name, beside the cassette folder.
    public var name: String
    /// The process that made it; nil for a name without one (a harness from before names carried it).
    public var pid: Int32?
    /// What follows the process id: unique among one process's recordings.
    public var tag: String
    /// Whole records in its journal (lines ended by a newline).
    public var records: Int
    /// Bytes after the journal's last newline: a record the process was writing when it died.
    public var tornBytes: Int
    /// Transcript files with something in them.
    public var transcripts: Int
    /// Whether it holds `meta.json`: the recording was closed, and only taking the cassette's place
    /// was left to do when the process died.
    public var closed: Bool
    /// When its journal (or the folder) last changed, in seconds since 1970: the newest goes first.
    public var modified: Double
    /// Its journal is there but could not be read (an I/O error): it may hold anything, so it is never
    /// cleared, and a recovery that cannot read it fails, leaving it as it is.
    public var journalUnreadable = false

    public init(
        name: String, pid: Int32?, tag: String, records: Int = 0, tornBytes: Int = 0, transcripts: Int = 0,
        closed: Bool = false, modified: Double = 0
    ) {
        self.name = name
        self.pid = pid
        self.tag = tag
        self.records = records
        self.tornBytes = tornBytes
        self.transcripts = transcripts
        self.closed = closed
        self.modified = modified
    }

    /// Whether anything of the recording reached the disk: a whole record, a transcript line, or the
    /// closed cassette. A partial without any is cleared, not recovered.
    public var holdsRecording: Bool { records > 0 || transcripts > 0 || closed || journalUnreadable }

    private static let tagCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")

    /// The start of every partial's name for the cassette folder named `directory`.
    public static func prefix(directory: String) -> String { ".\(directory).recording-" }

    /// The name of a partial of the cassette folder named `directory`, made by process `pid`.
    public static func name(directory: String, pid: Int32, tag: String) -> String {
        prefix(directory: directory) + "\(pid)-\(tag)"
    }

    /// The process id and tag in `name`, if it is a partial of the cassette folder named `directory`:
    /// `(pid, tag)`, or `(nil, tag)` for an older harness's `.DIR.recording-<tag>`.
    public static func owner(ofName name: String, directory: String) -> (pid: Int32?, tag: String)? {
        let start = Self.prefix(directory: directory)
        guard name.hasPrefix(start) else { return nil }
        let rest = name.dropFirst(start.count)
        let parts = rest.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        // Letters and digits only: `.a.recording-1-x.recording-2-T` is a partial of `a.recording-1-x`.
        let isTag = { (text: Substring) in
            !text.isEmpty && text.count <= 64 && text.allSatisfy { Self.tagCharacters.contains($0) }
        }
        if parts.count == 2, let pid = Int32(parts[0]), pid > 0, isTag(parts[1]) {
            return (pid, String(parts[1]))
        }
        guard parts.count == 1, isTag(rest) else { return nil }
        return (nil, String(rest))
    }
}
