import Foundation
import HarnessTimeline

/// A recorded world, opened for replay: a cassette folder (`meta.json`, `traffic.har`, `bodies/`,
/// `timeline.jsonl`), or a bare HAR file from another tool, which has no timeline and no meta.
///
/// Everything a cassette names is read from inside it: a symbolic link among its files and folders is
/// refused, naming its path (``CassetteFolder``). A body file's bytes are checked against the SHA-256
/// that names it before they are served or exported (``openBody(of:)``), not at open: opening reads no
/// body, and a body never served is never read.
public struct Cassette: Sendable {
    public let directory: URL
    /// Nil for a bare HAR file.
    public let meta: CassetteMeta?
    public let har: HAR
    /// The recorded run's timeline, when the cassette has one.
    public let timelineURL: URL?
    /// The HAR file: the folder's `traffic.har`, or the bare HAR.
    let harURL: URL
    /// The folder the HAR's `_file` names are read from, through no link.
    let folder: CassetteFolder
    /// The body files checked against their digests so far.
    let checkedBodies = CheckedBodies()

    /// Where an entry's body bytes are.
    public enum Body: Sendable, Equatable {
        case inline(Data)
        case file(URL, size: Int)
    }

    /// Opens `url`: a cassette folder, or a `.har` file. Checks the format version, every entry, that
    /// every body file the HAR names is there with the size it says, and that none of the cassette's
    /// files and folders is a symbolic link. Reads no body file.
    ///
    /// - Throws: ``CassetteError`` naming the file and the JSON path of the first problem.
    public static func open(_ url: URL) throws -> Cassette {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
            throw CassetteError(file: url.path, problem: "does not exist")
        }
        guard isFolder.boolValue else {
            // A HAR named on its own: the path is the user's, a link included.
            let har = try HARReader.read(contentsOf: url)
            return try Cassette(
                directory: url.deletingLastPathComponent(), meta: nil, har: har, harURL: url, timelineURL: nil)
        }
        let folder = CassetteFolder(url: url)
        let metaURL = url.appendingPathComponent("meta.json")
        guard let metaData = try folder.read("meta.json", atMost: largestMeta) else {
            let journal = url.appendingPathComponent(CassetteRecorder.journalName)
            if FileManager.default.fileExists(atPath: journal.path) {
                throw CassetteError(
                    file: metaURL.path,
                    problem: "is missing: a recording that adds to this cassette never finished (its process was "
                        + "killed); its journal is moved aside by the next recording that adds to it, or record again")
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
        if let lead = meta.timelineAtStart, !(lead.isFinite && lead >= 0 && lead <= 1e9) {
            throw CassetteError(
                file: metaURL.path, jsonPath: "$.timelineAtStart", problem: "\(lead) is not seconds from 0 to 10^9")
        }
        let harURL = url.appendingPathComponent("traffic.har")
        guard let harData = try folder.read("traffic.har", atMost: HARReader.largestDocument) else {
            throw CassetteError(file: harURL.path, problem: "is missing: \(url.path) is not a whole cassette")
        }
        let har = try HARReader.read(harData, file: harURL.path)
        // The folders and files the HAR does not name are the cassette's too: none may be a link.
        let timeline = try folder.file("timeline.jsonl")
        if case .file? = try folder.kind(of: "bodies") {
            throw CassetteError(file: folder.path("bodies"), problem: "is not a folder")
        }
        try checkTranscripts(in: folder)
        return try Cassette(
            directory: url, meta: meta, har: har, harURL: harURL,
            timelineURL: timeline == nil ? nil : url.appendingPathComponent("timeline.jsonl"))
    }

    /// The harness.yml the recorded run read (``CassetteMeta/Run``), read from inside the cassette; nil
    /// when the cassette keeps none (a version 1 cassette, a `harness serve` recording, a HAR).
    ///
    /// - Throws: ``CassetteError`` when it is a link, or larger than harness.yml may be.
    public func recordedConfiguration() throws -> Data? {
        guard meta != nil else { return nil }
        return try CassetteFolder(url: directory).read(
            CassetteMeta.Run.configurationFile, atMost: Self.largestConfiguration)
    }

    /// The most a kept harness.yml may hold.
    static let largestConfiguration = 16 << 20

    /// The most `meta.json` may hold: it is a few hundred bytes.
    static let largestMeta = 1 << 20

    /// `transcripts/` and each file in it: none may be a link.
    private static func checkTranscripts(in folder: CassetteFolder) throws {
        switch try folder.kind(of: "transcripts") {
        case nil: return
        case .file?: throw CassetteError(file: folder.path("transcripts"), problem: "is not a folder")
        case .folder?: break
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder.path("transcripts"))
        } catch {
            throw CassetteError(
                file: folder.path("transcripts"), problem: "cannot be read (\(error.localizedDescription))")
        }
        for name in names {
            if try folder.kind(of: "transcripts/\(name)") == .folder {
                throw CassetteError(file: folder.path("transcripts/\(name)"), problem: "is not a transcript file")
            }
        }
    }

    private init(directory: URL, meta: CassetteMeta?, har: HAR, harURL: URL, timelineURL: URL?) throws {
        self.directory = directory
        self.meta = meta
        self.har = har
        self.harURL = harURL
        self.timelineURL = timelineURL
        self.folder = CassetteFolder(url: directory)
        let harPath = harURL.path
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
            let at = "$.log.entries[\(index)].response.content._file"
            let url = directory.appendingPathComponent(file)
            let size: Int
            switch try folder.kind(of: file) {
            case nil:
                throw CassetteError(file: harPath, jsonPath: at, problem: "the body file \(url.path) is missing")
            case .folder?:
                throw CassetteError(file: harPath, jsonPath: at, problem: "the body file \(url.path) is a folder")
            case .file(let found)?:
                size = found
            }
            guard size == entry.response.bodySize else {
                throw CassetteError(
                    file: harPath, jsonPath: at,
                    problem: "the body file \(url.path) has \(size) bytes, not the \(entry.response.bodySize) recorded")
            }
            // The file's name is its digest; a `_sha256` beside it must be the same one.
            let named = String(file.dropFirst("bodies/".count))
            if let sha256 = entry.response.content.sha256, sha256 != named {
                throw CassetteError(
                    file: harPath, jsonPath: "$.log.entries[\(index)].response.content._sha256",
                    problem: "is \(sha256), but the body file is named by the SHA-256 \(named)")
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
            // Checked when the HAR was read (HARReader): what decodes here is what was checked.
            return .inline(HARBase64.decode(text) ?? Data())
        }
        return .inline(Data(text.utf8))
    }

    /// The recorded run's events.
    public func timeline() throws -> [TimelineEvent] {
        guard let timelineURL else { return [] }
        // Looked at again as it is read: it may have been replaced since the cassette was opened.
        guard try folder.file("timeline.jsonl") != nil else {
            throw CassetteError(file: timelineURL.path, problem: "is missing")
        }
        return try TimelineFile.read(timelineURL)
    }
}
