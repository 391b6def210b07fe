import Foundation
import HarnessTimeline

/// A recorded world, opened for replay: a cassette folder (`meta.json`, `traffic.har`, `bodies/`,
/// `timeline.jsonl`), or a bare HAR file from another tool, which has no timeline and no meta.
public struct Cassette: Sendable {
    public let directory: URL
    /// Nil for a bare HAR file.
    public let meta: CassetteMeta?
    public let har: HAR
    /// The recorded run's timeline, when the cassette has one.
    public let timelineURL: URL?

    /// Where an entry's body bytes are.
    public enum Body: Sendable, Equatable {
        case inline(Data)
        case file(URL, size: Int)
    }

    /// Opens `url`: a cassette folder, or a `.har` file. Checks the format version, every entry, and
    /// that every body file the HAR names is there with the size it says.
    ///
    /// - Throws: ``CassetteError`` naming the file and the JSON path of the first problem.
    public static func open(_ url: URL) throws -> Cassette {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
            throw CassetteError(file: url.path, problem: "does not exist")
        }
        guard isFolder.boolValue else {
            let har = try HARReader.read(contentsOf: url)
            return try Cassette(directory: url.deletingLastPathComponent(), meta: nil, har: har, timelineURL: nil)
        }
        let metaURL = url.appendingPathComponent("meta.json")
        guard let metaData = FileManager.default.contents(atPath: metaURL.path) else {
            let journal = url.appendingPathComponent(CassetteRecorder.journalName)
            if FileManager.default.fileExists(atPath: journal.path) {
                throw CassetteError(
                    file: metaURL.path,
                    problem: "is missing: the recording never finished (the process was killed); record again")
            }
            throw CassetteError(file: metaURL.path, problem: "is missing: \(url.path) is not a cassette")
        }
        let meta: CassetteMeta
        do {
            meta = try JSONDecoder().decode(CassetteMeta.self, from: metaData)
        } catch {
            throw CassetteError.decoding(error, file: metaURL.path)
        }
        guard meta.format == CassetteMeta.formatName else {
            throw CassetteError(
                file: metaURL.path, jsonPath: "$.format",
                problem: "\"\(meta.format)\" is not \(CassetteMeta.formatName)")
        }
        guard meta.version <= CassetteMeta.currentVersion, meta.version >= 1 else {
            throw CassetteError(
                file: metaURL.path, jsonPath: "$.version",
                problem: "format version \(meta.version) is newer than this harness reads "
                    + "(\(CassetteMeta.currentVersion)); use a newer harness")
        }
        let har = try HARReader.read(contentsOf: url.appendingPathComponent("traffic.har"))
        let timeline = url.appendingPathComponent("timeline.jsonl")
        return try Cassette(
            directory: url, meta: meta, har: har,
            timelineURL: FileManager.default.fileExists(atPath: timeline.path) ? timeline : nil)
    }

    private init(directory: URL, meta: CassetteMeta?, har: HAR, timelineURL: URL?) throws {
        self.directory = directory
        self.meta = meta
        self.har = har
        self.timelineURL = timelineURL
        let harPath = meta == nil ? directory.path : directory.appendingPathComponent("traffic.har").path
        for (index, entry) in har.log.entries.enumerated() {
            guard let file = entry.response.content.file else {
                // Ours promise `bodySize` bytes: an inline body must hold them.
                if entry.writes != nil, case .inline(let data) = Self.body(of: index, in: har, directory: directory),
                    data.count != entry.response.bodySize
                {
                    throw CassetteError(
                        file: harPath, jsonPath: "$.log.entries[\(index)].response.content.text",
                        problem: "holds \(data.count) bytes, not the \(entry.response.bodySize) of response.bodySize")
                }
                continue
            }
            let url = directory.appendingPathComponent(file)
            let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? nil
            guard let size else {
                throw CassetteError(
                    file: harPath, jsonPath: "$.log.entries[\(index)].response.content._file",
                    problem: "the body file \(url.path) is missing")
            }
            guard size == entry.response.bodySize else {
                throw CassetteError(
                    file: harPath, jsonPath: "$.log.entries[\(index)].response.content._file",
                    problem: "the body file \(url.path) has \(size) bytes, not the \(entry.response.bodySize) recorded")
            }
        }
    }

    /// The body of entry `index`.
    public func body(of index: Int) -> Body { Self.body(of: index, in: har, directory: directory) }

    private static func body(of index: Int, in har: HAR, directory: URL) -> Body {
        let content = har.log.entries[index].response.content
        if let file = content.file {
            return .file(directory.appendingPathComponent(file), size: har.log.entries[index].response.bodySize)
        }
        guard let text = content.text else { return .inline(Data()) }
        if content.encoding == "base64" {
            return .inline(Data(base64Encoded: text, options: .ignoreUnknownCharacters) ?? Data())
        }
        return .inline(Data(text.utf8))
    }

    /// The recorded run's events.
    public func timeline() throws -> [TimelineEvent] {
        guard let timelineURL else { return [] }
        return try TimelineFile.read(timelineURL)
    }
}
