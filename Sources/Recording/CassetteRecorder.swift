import Crypto
import Foundation
import HarnessTimeline

/// Records exchanges into a cassette folder as they finish: each entry is appended to a journal at
/// once (small: bodies over the inline limit go to `bodies/` as they stream), and ``close(_:)`` turns
/// the journal into `traffic.har` and writes `meta.json` last. Memory does not grow with body sizes.
public final class CassetteRecorder: Sendable {
    /// Where the cassette ends up.
    public let directory: URL
    /// Where it is written until ``close(_:timeline:)``: a new folder beside `directory`, so that an
    /// earlier cassette there stays whole until the new one is; `directory` itself when adding to it.
    /// The new folder's name carries this process's id (``PartialRecording``), so that when the process
    /// is killed the next run can tell the folder is nobody's and recover it.
    let workingDirectory: URL
    /// What became of the recordings killed processes left beside `directory`, dealt with before this
    /// one began (``RecordingRecovery``): a command prints these.
    public let recoveredAtStart: [RecoveryOutcome]
    private let redaction: LockedState<Redactor>
    let store: BodyStore
    private let transcripts: TranscriptFiles
    private let start = ContinuousClock.now
    private let state: LockedState<State>

    private struct State {
        var journal: FileHandle?
        var entries = 0
        var nextConnection = 1
        /// The first write that failed (a full disk): the recording stops, and closing says why.
        var failure: String?
    }

    /// The redaction in force.
    var redactor: Redactor { redaction.withLock { $0 } }

    /// Adds secrets learned after the recording began (the APNs key FakeAPNs writes as it starts).
    public func redact(also secrets: [Redactor.Secret]) {
        redaction.withLock { $0 = Redactor(secrets: $0.secrets + secrets) }
    }

    /// Stops the recording after a write failed; ``close(_:timeline:)`` reports it.
    func fail(_ problem: String) {
        let journal = state.withLock { state -> FileHandle? in
            if state.failure == nil { state.failure = problem }
            defer { state.journal = nil }
            return state.journal
        }
        // The recording has failed already: that failure is the one said.
        try? journal?.close()
        transcripts.close()
    }

    static let journalName = "traffic.har.journal"

    /// The partial folders this process's recorders are writing in, until each is closed: a partial
    /// named with this process's id and not here was left by an earlier process that had the same id
    /// (a container started again), so it is recovered like any dead process's.
    static let live = LockedState<Set<String>>([])

    /// Whether the partial folder `name`, named with this process's id, is one of its recordings under way.
    static func isRecordingHere(_ name: String) -> Bool { live.withLock { $0.contains(name) } }

    /// Prepares `directory` for a new recording. A folder holding an earlier cassette is emptied of it;
    /// a folder holding anything else is refused, so that recording never deletes a user's files.
    ///
    /// - Parameter keeping: the cassette already in `directory`, whose entries and bodies the new
    ///   recording keeps and adds to (vcrpy's `new_episodes`).
    public init(directory: URL, redactor: Redactor, keeping kept: Cassette? = nil) throws {
        let manager = FileManager.default
        let path = directory.path
        // Before this recording makes its own folder: a killed one's journal is kept, beside `directory`
        // (this recording takes `directory`'s place when it closes).
        recoveredAtStart = RecordingRecovery.run(beside: directory, for: .recording)
        if kept != nil {
            // Added to: an unfinished journal from an earlier attempt (killed while adding) is kept beside
            // the new one, never deleted; if it cannot be moved, nothing is recorded.
            let stale = directory.appendingPathComponent(Self.journalName)
            if manager.fileExists(atPath: stale.path) {
                let aside = directory.appendingPathComponent(
                    "\(Self.journalName).interrupted-\(Int(Date().timeIntervalSince1970))-\(UUID().uuidString.prefix(4))"
                )
                do {
                    try manager.moveItem(at: stale, to: aside)
                } catch {
                    throw CassetteError(
                        file: stale.path,
                        problem: "holds an interrupted recording's exchanges and cannot be moved aside "
                            + "(\(error.localizedDescription)): nothing is recorded over it")
                }
            }
        } else {
            try Self.checkReplaceable(directory)
        }
        self.directory = directory
        self.workingDirectory =
            kept != nil
            ? directory
            : directory.deletingLastPathComponent().appendingPathComponent(
                PartialRecording.name(
                    directory: directory.lastPathComponent, pid: ProcessInfo.processInfo.processIdentifier,
                    tag: String(UUID().uuidString.prefix(8))))
        if workingDirectory != directory {
            let name = workingDirectory.lastPathComponent
            Self.live.withLock { _ = $0.insert(name) }
        }
        self.redaction = LockedState(redactor)
        self.store = BodyStore(cassette: workingDirectory)
        self.transcripts = TranscriptFiles(directory: workingDirectory.appendingPathComponent("transcripts"))
        do {
            try manager.createDirectory(at: store.directory, withIntermediateDirectories: true)
            let journal = workingDirectory.appendingPathComponent(Self.journalName)
            guard manager.createFile(atPath: journal.path, contents: nil) else {
                throw CocoaError(.fileWriteNoPermission)
            }
            let handle = try FileHandle(forWritingTo: journal)
            var state = State(journal: handle)
            if let kept {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                for entry in kept.har.log.entries {
                    try handle.write(contentsOf: try encoder.encode(entry) + Data("\n".utf8))
                    state.entries += 1
                    // Ids from the file are bounded before one is added to them.
                    let id = entry.connection.flatMap(Int.init).map { min(max($0, 0), 1 << 40) } ?? 0
                    state.nextConnection = max(state.nextConnection, id + 1)
                }
                // New entries sort after the kept ones.
                offsetBase = kept.har.log.entries.map { ($0.offset ?? 0) + $0.time }.max().map { $0 + 1 } ?? 0
            } else {
                offsetBase = 0
            }
            self.state = LockedState(state)
        } catch let error as CassetteError {
            throw error
        } catch {
            throw CassetteError(file: path, problem: "cannot be written (\(error.localizedDescription))")
        }
    }

    /// Whether `directory` may be replaced by a new cassette: it does not exist, is empty, or holds a
    /// cassette and nothing else. Recording never deletes a user's files.
    static func checkReplaceable(_ directory: URL) throws {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path), !names.isEmpty
        else { return }
        // A harness.yml is a cassette's only beside its meta.json or journal: alone, it is the user's.
        var ours = Set(["meta.json", "traffic.har", "timeline.jsonl", "bodies", "transcripts", journalName])
        if names.contains("meta.json") || names.contains(journalName) {
            ours.insert(CassetteMeta.Run.configurationFile)
        }
        guard Set(names).isSubset(of: ours) else {
            throw CassetteError(
                file: directory.path,
                problem:
                    "is not empty and not a cassette (it holds \(names.sorted().prefix(3).joined(separator: ", "))); "
                    + "record into a new or empty folder")
        }
    }

    /// Where this recording's offsets start: after the kept entries' when adding to a cassette.
    private let offsetBase: Double

    /// Milliseconds since the recording began, as the cassette's offsets count them.
    public var elapsed: Double { milliseconds }

    /// Milliseconds since the recording began.
    var milliseconds: Double { offsetBase + Self.milliseconds(start.duration(to: .now)) }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    /// A new connection's id, unique within the cassette.
    public func connectionID() -> String {
        state.withLock { state in
            defer { state.nextConnection += 1 }
            return "\(state.nextConnection)"
        }
    }

    /// Starts recording one exchange, at the moment its request arrived.
    public func exchange(
        service: String, link: String, connection: String?, method: String, url: String, httpVersion: String,
        headers: [(name: String, value: String)], requestBody: String? = nil, requestMimeType: String = ""
    ) -> ExchangeRecording {
        let request = HAR.Request(
            method: method, url: Self.recordableURL(redactor.redact(url)), httpVersion: httpVersion,
            headers: redactor.redact(headers.map { HAR.Header(name: $0.name, value: $0.value) }),
            postData: requestBody.map { HAR.PostData(mimeType: requestMimeType, text: redactor.redact($0)) })
        return ExchangeRecording(
            recorder: self, service: service, link: link, connection: connection, request: request,
            offset: milliseconds)
    }

    /// Adds a line of the device protocol to `app`'s transcript, as it passed (redacted).
    ///
    /// - Parameter at: when it passed (``elapsed``), if not now: a line held until its app was known.
    public func transcribe(app: String, from side: TranscriptLine.Side, line: some Collection<UInt8>, at: Double? = nil)
    {
        guard state.withLock({ $0.journal != nil }) else { return }
        var text = String(decoding: line, as: UTF8.self)
        if text.hasSuffix("\n") { text.removeLast() }
        let redacted = redactor.redact(text)
        do {
            try transcripts.append(app: app) {
                TranscriptLine(at: ((at ?? milliseconds) * 1000).rounded() / 1000, from: side, line: redacted)
            }
        } catch {
            fail("the transcript of \(app) could not be written (\(error.localizedDescription))")
        }
    }

    /// `url` as a URL every reader takes: a request target sent unencoded (`?where={"a":1}`, which
    /// servers accept) or holding a redaction marker is percent-encoded, so that one odd request cannot
    /// make the cassette unreadable.
    static func recordableURL(_ url: String) -> String {
        if URL(string: url)?.scheme != nil { return url }
        var allowed = CharacterSet.urlQueryAllowed
        allowed.insert(charactersIn: "#%")
        if let encoded = url.addingPercentEncoding(withAllowedCharacters: allowed), URL(string: encoded)?.scheme != nil
        {
            return encoded
        }
        // A stray `%` too.
        allowed.remove("%")
        return url.addingPercentEncoding(withAllowedCharacters: allowed) ?? url
    }

    func append(_ entry: HAR.Entry) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard var line = try? encoder.encode(entry) else { return }
        line.append(UInt8(ascii: "\n"))
        let failure: String? = state.withLock { state in
            guard let journal = state.journal else { return nil }
            do {
                try journal.write(contentsOf: line)
            } catch {
                return "the journal could not be written (\(error.localizedDescription))"
            }
            state.entries += 1
            return nil
        }
        if let failure { fail(failure) }
    }

    /// Finishes the cassette: `traffic.har` from the journal (entries in the order they began),
    /// `timeline.jsonl` if given, and `meta.json` last, saying how many entries it holds; then it takes
    /// the place of whatever cassette `directory` held.
    ///
    /// - Throws: ``CassetteError`` when a write failed during the recording or now; the earlier
    ///   cassette, if any, is left as it was.
    /// - Parameter configuration: the harness.yml the run read, kept as `harness.yml` (owner-only, it may
    ///   hold keys) for a replay to run the same scenario.
    public func close(_ meta: CassetteMeta, timeline: Data? = nil, configuration: Data? = nil) throws {
        let (journal, failure) = state.withLock { state -> (FileHandle?, String?) in
            defer { state.journal = nil }
            return (state.journal, state.failure)
        }
        // Its writes are made (unbuffered); reading it below finds whatever a failed close kept from it.
        try? journal?.close()
        transcripts.close()
        let manager = FileManager.default
        let journalURL = workingDirectory.appendingPathComponent(Self.journalName)
        let partialName = workingDirectory.lastPathComponent
        defer { Self.live.withLock { _ = $0.remove(partialName) } }
        do {
            if let failure { throw CassetteError(file: directory.path, problem: "was not recorded: \(failure)") }
            let entries = try Self.entries(inJournal: journalURL)
            let har = HAR(log: HAR.Log(creator: HAR.Creator(name: HAR.creatorName, version: "1"), entries: entries))
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
            try encoder.encode(har).write(to: workingDirectory.appendingPathComponent("traffic.har"), options: .atomic)
            if let timeline {
                try timeline.write(to: workingDirectory.appendingPathComponent("timeline.jsonl"), options: .atomic)
            }
            if let configuration {
                let url = workingDirectory.appendingPathComponent(CassetteMeta.Run.configurationFile)
                try configuration.write(to: url, options: .atomic)
                try manager.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
            }
            var meta = meta
            meta.entries = entries.count
            try encoder.encode(meta).write(to: workingDirectory.appendingPathComponent("meta.json"), options: .atomic)
            // With meta.json written, a journal left is removed by the next recovery, never read.
            try? manager.removeItem(at: journalURL)
            if let leftovers = try? manager.contentsOfDirectory(atPath: store.directory.path) {
                for name in leftovers where name.hasPrefix(".partial-") {
                    // Left, it is removed by the next recovery: no entry names a partial body.
                    try? manager.removeItem(at: store.directory.appendingPathComponent(name))
                }
            }
            if workingDirectory != directory {
                try Self.checkReplaceable(directory)
                if manager.fileExists(atPath: directory.path) { try manager.removeItem(at: directory) }
                try manager.moveItem(at: workingDirectory, to: directory)
            }
        } catch let error as CassetteError {
            throw keptAfterFailure(error)
        } catch {
            throw keptAfterFailure(
                CassetteError(file: directory.path, problem: "could not be finished (\(error.localizedDescription))"))
        }
    }

    /// A close that failed leaves what was journaled where it is, the partial folder beside `directory`:
    /// the next recording or replay of `directory` recovers it (``RecordingRecovery``). The error says so.
    private func keptAfterFailure(_ error: CassetteError) -> CassetteError {
        guard workingDirectory != directory, FileManager.default.fileExists(atPath: workingDirectory.path) else {
            return error
        }
        var kept = error
        kept.problem +=
            "; what was recorded is kept in \(workingDirectory.path), recovered into a cassette marked "
            + "incomplete by the next recording or replay of \(directory.path)"
        return kept
    }

    /// The journal's entries, sorted by when they began. Only whole records count (``JournalReading``).
    static func entries(inJournal url: URL) throws -> [HAR.Entry] {
        guard let data = FileManager.default.contents(atPath: url.path) else { return [] }
        return JournalReading.read(data).entriesInOrder
    }
}

/// HAR's `startedDateTime`: ISO 8601 with milliseconds and a time zone.
enum HARDate {
    static func string(_ date: Date) -> String {
        date.formatted(
            Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: TimeZone(identifier: "UTC")!))
    }
}
