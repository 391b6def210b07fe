import Foundation
import HarnessTimeline

/// A run's `timeline.jsonl`: one event a line, as the reports write it.
public enum TimelineFile {
    /// The events in `url`.
    ///
    /// - Throws: ``CassetteError`` naming the file and the line (`$[line]`, from 1) of the first bad one.
    public static func read(_ url: URL) throws -> [TimelineEvent] {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw CassetteError(file: url.path, problem: "cannot be read")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        var events: [TimelineEvent] = []
        for (index, line) in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated()
        where !line.isEmpty {
            do {
                events.append(try decoder.decode(TimelineEvent.self, from: line))
            } catch {
                let inner = CassetteError.decoding(error, file: url.path)
                throw CassetteError(
                    file: url.path, jsonPath: "line \(index + 1), " + inner.jsonPath, problem: inner.problem)
            }
        }
        return events
    }
}
