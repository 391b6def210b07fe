import Foundation
import HarnessTimeline

/// One line of an app's device-protocol transcript (`transcripts/<bundle id>.jsonl`, on a named device
/// of a scenario with several `transcripts/<bundle id>@<device>.jsonl`): when it passed,
/// which side wrote it, and the line as written (without its newline).
public struct TranscriptLine: Codable, Sendable, Equatable {
    public enum Side: String, Codable, Sendable {
        /// The app wrote it to the device.
        case app
        /// The device wrote it to the app.
        case device
    }

    /// Milliseconds from the cassette's start.
    public var at: Double
    public var from: Side
    public var line: String

    public init(at: Double, from: Side, line: String) {
        self.at = at
        self.from = from
        self.line = line
    }

    /// A file name for `app`'s transcript: letters, digits, `.`, `-` and `_` kept, anything else `_`.
    static func fileName(for app: String) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_@")
        let name = String(app.prefix(200).map { allowed.contains($0) ? $0 : "_" })
        return (name.isEmpty || name.hasPrefix(".") ? "_" + name : name) + ".jsonl"
    }
}

/// The open transcript files of a recording, one per app, appended to line by line as the lines pass.
final class TranscriptFiles: Sendable {
    let directory: URL
    /// The open files; nil once closed, when lines are dropped.
    private let files = LockedState<[String: FileHandle]?>([:])

    init(directory: URL) { self.directory = directory }

    /// Appends the line `make` gives to `app`'s transcript, creating it at the first line. The line is
    /// made under the files' lock, so that the lines of the app's connections keep their order. After
    /// ``close()``, nothing is written.
    func append(app: String, _ make: () -> TranscriptLine) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let name = TranscriptLine.fileName(for: app)
        try files.withLock { files in
            guard files != nil else { return }
            var bytes = try encoder.encode(make())
            bytes.append(UInt8(ascii: "\n"))
            if files?[name] == nil {
                let handle = try Self.open(directory.appendingPathComponent(name), in: directory)
                files?[name] = handle
            }
            try files?[name]?.write(contentsOf: bytes)
        }
    }

    /// Opens `url` to append to it, creating it if need be. A file that an earlier recording left
    /// without a final newline (the process was killed mid-line) gets one first, so that the new lines
    /// stay lines.
    private static func open(_ url: URL, in directory: URL) throws -> FileHandle {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if !FileManager.default.fileExists(atPath: url.path) {
            guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
                throw CocoaError(.fileWriteNoPermission)
            }
        }
        let handle = try FileHandle(forUpdating: url)
        do {
            let end = try handle.seekToEnd()
            if end > 0 {
                try handle.seek(toOffset: end - 1)
                if try handle.read(upToCount: 1) != Data("\n".utf8) { try handle.write(contentsOf: Data("\n".utf8)) }
            }
            return handle
        } catch {
            // The error above is the one to say; the handle goes either way.
            try? handle.close()
            throw error
        }
    }

    /// Closes every file; lines written after this are dropped.
    func close() {
        let all = files.withLock { files in
            defer { files = nil }
            return Array(files?.values ?? [:].values)
        }
        for handle in all { try? handle.close() }
    }
}

extension Cassette {
    /// The apps whose transcripts the cassette holds (their bundle ids as file names give them, each
    /// with `@<device>` on a named device).
    public var transcriptNames: [String] {
        let folder = directory.appendingPathComponent("transcripts")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".jsonl") }.map { String($0.dropLast(".jsonl".count)) }.sorted()
    }

    /// `app`'s transcript, line by line.
    ///
    /// - Throws: ``CassetteError`` with the file and the line's JSON path when a line cannot be read.
    public func transcript(of app: String) throws -> [TranscriptLine] {
        let url = directory.appendingPathComponent("transcripts").appendingPathComponent(
            TranscriptLine.fileName(for: app))
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw CassetteError(file: url.path, problem: "does not exist")
        }
        let decoder = JSONDecoder()
        var lines: [TranscriptLine] = []
        for (number, line) in data.split(separator: UInt8(ascii: "\n")).enumerated() {
            do {
                lines.append(try decoder.decode(TranscriptLine.self, from: line))
            } catch {
                throw CassetteError(file: url.path, jsonPath: "line \(number + 1)", problem: "is not a transcript line")
            }
        }
        return lines
    }
}
