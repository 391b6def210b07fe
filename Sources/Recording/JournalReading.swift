import Foundation

/// A recording's journal (`traffic.har.journal`, one HAR entry a line) read as far as it is whole. The
/// recorder writes each record with its newline in one write, so a process killed mid-write leaves at
/// most its last line cut short: that tail is dropped and counted, never guessed at.
public struct JournalReading: Sendable, Equatable {
    /// The records that were whole and readable, in the order they were written.
    public var entries: [HAR.Entry]
    /// Bytes after the last newline: a record cut short.
    public var tornBytes: Int
    /// Whole lines (1-based) that are not a HAR entry: damage from something other than a kill.
    public var unreadableLines: [Int]

    public init(entries: [HAR.Entry] = [], tornBytes: Int = 0, unreadableLines: [Int] = []) {
        self.entries = entries
        self.tornBytes = tornBytes
        self.unreadableLines = unreadableLines
    }

    /// The entries sorted by when their requests began (`_offset`), the journal's order among equals:
    /// the order `traffic.har` keeps.
    public var entriesInOrder: [HAR.Entry] {
        entries.enumerated().sorted {
            ($0.element.offset ?? 0, $0.offset) < ($1.element.offset ?? 0, $1.offset)
        }.map(\.element)
    }

    /// Reads `journal`: every whole line decoded, the tail after the last newline counted as torn.
    public static func read(_ journal: Data) -> JournalReading {
        let decoder = JSONDecoder()
        var reading = JournalReading()
        let (lines, torn) = wholeLines(journal)
        reading.tornBytes = torn
        for (number, line) in lines {
            if let entry = try? decoder.decode(HAR.Entry.self, from: line) {
                reading.entries.append(entry)
            } else {
                reading.unreadableLines.append(number)
            }
        }
        return reading
    }

    /// How many whole records `journal` holds and how many bytes follow its last newline, without
    /// decoding anything: cheap enough for a journal that is still growing.
    public static func measure(_ journal: Data) -> (records: Int, tornBytes: Int) {
        journal.withUnsafeBytes { bytes in
            var records = 0
            var lineStart = 0
            for index in 0..<bytes.count where bytes[index] == UInt8(ascii: "\n") {
                if index > lineStart { records += 1 }
                lineStart = index + 1
            }
            return (records, bytes.count - lineStart)
        }
    }

    /// The non-empty lines that end with a newline, numbered from 1, and the length of what follows
    /// the last newline.
    static func wholeLines(_ journal: Data) -> (lines: [(number: Int, bytes: Data)], tornBytes: Int) {
        var lines: [(number: Int, bytes: Data)] = []
        var lineStart = journal.startIndex
        var number = 0
        for index in journal.indices where journal[index] == UInt8(ascii: "\n") {
            number += 1
            if index > lineStart { lines.append((number, journal[lineStart..<index])) }
            lineStart = index + 1
        }
        return (lines, journal.endIndex - lineStart)
    }
}
