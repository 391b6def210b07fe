import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file work of recovering what killed recordings left beside a cassette folder: finds the
/// partials (``PartialRecording``), lets ``RecoveryPlan`` decide, and recovers, moves or clears each.
/// A command runs it before it records into the folder or replays it (docs/cassettes.md, "A recording
/// cut short").
public enum RecordingRecovery {
    /// Deals with every partial recording beside `directory` as ``RecoveryPlan`` decides and says what
    /// became of each, newest first. Never throws: a partial it cannot recover is named in a `.failed`
    /// outcome and stays for the next run.
    ///
    /// - Parameters:
    ///   - isAlive: whether a process runs; ``processIsAlive(_:)`` but in tests.
    ///   - ourPID: the id a partial is renamed under while it is recovered, so that another harness
    ///     recovering at the same moment takes it for a recording under way and leaves it.
    public static func run(
        beside directory: URL, for purpose: RecoveryPlan.Purpose,
        isAlive: (Int32) -> Bool = RecordingRecovery.processIsAlive,
        ourPID: Int32 = ProcessInfo.processInfo.processIdentifier
    ) -> [RecoveryOutcome] {
        let directory = directory.standardizedFileURL
        let parent = directory.deletingLastPathComponent()
        let name = directory.lastPathComponent
        let siblings = (try? FileManager.default.contentsOfDirectory(atPath: parent.path)) ?? []
        // This process's own id runs only if one of its recorders writes in a partial of that id; else an
        // earlier process with the same id left them (a container started again).
        let here = getpid()
        let ownRecording = siblings.contains {
            PartialRecording.owner(ofName: $0, directory: name)?.pid == here && CassetteRecorder.isRecordingHere($0)
        }
        func alive(_ pid: Int32) -> Bool { pid == here ? ownRecording : isAlive(pid) }
        let partials = siblings.compactMap { found($0, in: parent, directory: name, isAlive: alive) }
        guard !partials.isEmpty else { return [] }
        let free = isFree(directory)
        let plan = RecoveryPlan.decide(
            partials, directory: name, directoryIsFree: free, purpose: purpose, siblings: Set(siblings),
            isAlive: alive)
        let work = Work(parent: parent, directory: directory, directoryWasFree: free, ourPID: ourPID)
        return plan.steps.compactMap { work.carryOut($0) }
    }

    /// Whether process `pid` exists (a zombie not yet reaped counts, as does another user's process).
    public static func processIsAlive(_ pid: Int32) -> Bool {
        guard pid > 0 else { return false }
        return kill(pid, 0) == 0 || errno != ESRCH
    }

    /// The partial named `name` beside the cassette folder, if it is one. A live recording's journal
    /// is not read: it is still being written, and may be large.
    static func found(_ name: String, in parent: URL, directory: String, isAlive: (Int32) -> Bool)
        -> PartialRecording?
    {
        guard let owner = PartialRecording.owner(ofName: name, directory: directory) else { return nil }
        let manager = FileManager.default
        let folder = parent.appendingPathComponent(name)
        // A folder itself: a link of that name is not a recording, and nothing is written through it.
        guard kind(of: folder) == .typeDirectory else { return nil }
        var partial = PartialRecording(name: name, pid: owner.pid, tag: owner.tag)
        let journal = folder.appendingPathComponent(CassetteRecorder.journalName)
        partial.modified = modified(journal) ?? modified(folder) ?? 0
        guard let pid = owner.pid, !isAlive(pid) else { return partial }
        if manager.fileExists(atPath: journal.path) {
            do {
                let measured = JournalReading.measure(try Data(contentsOf: journal, options: .mappedIfSafe))
                partial.records = measured.records
                partial.tornBytes = measured.tornBytes
            } catch {
                partial.journalUnreadable = true
            }
        }
        let transcripts = folder.appendingPathComponent("transcripts")
        partial.transcripts =
            ((try? manager.contentsOfDirectory(atPath: transcripts.path)) ?? []).filter {
                (size(transcripts.appendingPathComponent($0)) ?? 0) > 0
            }.count
        partial.closed = manager.fileExists(atPath: folder.appendingPathComponent("meta.json").path)
        return partial
    }

    /// The cassette folder does not exist, or is an empty folder: a recovery may become it.
    static func isFree(_ directory: URL) -> Bool {
        switch kind(of: directory) {
        case nil: return true
        case .typeDirectory?:
            return (try? FileManager.default.contentsOfDirectory(atPath: directory.path))?.isEmpty == true
        default: return false
        }
    }

    /// What `url` is, not following a link (`lstat`); nil when nothing is there.
    static func kind(of url: URL) -> FileAttributeType? {
        (try? FileManager.default.attributesOfItem(atPath: url.path))?[.type] as? FileAttributeType
    }

    static func modified(_ url: URL) -> Double? {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.modificationDate] as? Date)?
            .timeIntervalSince1970
    }

    static func size(_ url: URL) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? Int
    }
}

/// A step of the plan that could not be carried out.
enum RecoveryFailure: Error, CustomStringConvertible {
    /// A partial folder could not be renamed for adoption (`rename(2)`'s errno).
    case cannotRename(String, to: String, errno: Int32)
    /// A recovered folder could not be put in its place (`rename(2)`'s errno).
    case cannotMove(String, to: String, errno: Int32)
    /// The journal could not be read; it is left as it is.
    case journalUnreadable(String, error: String)
    /// The recovered cassette could not be written.
    case cassetteUnwritable(in: String, error: String)

    var description: String {
        switch self {
        case .cannotRename(let source, let name, let code):
            "\(source) could not be renamed to \(name) (\(Self.says(code)))"
        case .cannotMove(let folder, let target, let code):
            "\(folder) could not be moved to \(target) (\(Self.says(code)))"
        case .journalUnreadable(let path, let error): "\(path) could not be read (\(error)); left as it is"
        case .cassetteUnwritable(let folder, let error): "the cassette could not be written in \(folder) (\(error))"
        }
    }

    /// A system call's errno as the system says it.
    private static func says(_ code: Int32) -> String { String(cString: strerror(code)) }
}

extension RecordingRecovery {
    /// Carries out a plan's steps beside one cassette folder.
    struct Work {
        var parent: URL
        var directory: URL
        /// Whether the cassette folder was free when the plan was made: says why a recovery went beside it.
        var directoryWasFree: Bool
        var ourPID: Int32

        /// What became of the step's partial; nil when another process took it first.
        func carryOut(_ step: RecoveryPlan.Step) -> RecoveryOutcome? {
            switch step {
            case .leave(let partial, let reason):
                let folder = parent.appendingPathComponent(partial.name)
                switch reason {
                case .running(let pid):
                    return RecoveryOutcome(
                        kind: .running, partial: folder, pid: pid,
                        message:
                            "\(folder.path) is a recording into \(directory.path) under way by process \(pid), left "
                            + "alone (it takes the folder's place when that process closes it)")
                case .noProcessID:
                    return RecoveryOutcome(
                        kind: .unowned, partial: folder, pid: nil,
                        message:
                            "\(folder.path) was left by a recording of an older harness, whose process cannot be told: "
                            + "left alone; remove it if no recording into \(directory.path) is running")
                }
            case .clear(let partial):
                return clear(partial)
            case .recover(let partial, let destination):
                let target: URL
                switch destination {
                case .directory: target = directory
                case .beside(let name): target = parent.appendingPathComponent(name)
                }
                do {
                    return try recover(partial, into: target)
                } catch {
                    let folder = parent.appendingPathComponent(adoptedName(partial))
                    let at =
                        FileManager.default.fileExists(atPath: folder.path)
                        ? folder : parent.appendingPathComponent(partial.name)
                    return RecoveryOutcome(
                        kind: .failed, partial: at, pid: partial.pid,
                        message:
                            "could not recover the recording process \(partial.pid ?? 0) was making when it was killed "
                            + "into \(target.path): \(error); it is left at \(at.path) for the next run")
                }
            }
        }

        /// The partial's name under this process's id.
        func adoptedName(_ partial: PartialRecording) -> String {
            PartialRecording.name(directory: directory.lastPathComponent, pid: ourPID, tag: partial.tag)
        }

        /// Renames the partial under this process's id, the one atomic step that makes it this
        /// process's to recover: another harness now sees a live recording, and if this one dies
        /// mid-recovery, the next run recovers it again. Nil when another process renamed it first.
        func adopt(_ partial: PartialRecording) throws -> URL? {
            let source = parent.appendingPathComponent(partial.name)
            let adopted = parent.appendingPathComponent(adoptedName(partial))
            if source == adopted { return adopted }
            if rename(source.path, adopted.path) == 0 { return adopted }
            let code = errno
            if code == ENOENT { return nil }
            throw RecoveryFailure.cannotRename(source.path, to: adopted.lastPathComponent, errno: code)
        }

        func clear(_ partial: PartialRecording) -> RecoveryOutcome? {
            let source = parent.appendingPathComponent(partial.name)
            let pid = partial.pid ?? 0
            do {
                guard let adopted = try adopt(partial) else { return nil }
                try FileManager.default.removeItem(at: adopted)
            } catch {
                return RecoveryOutcome(
                    kind: .failed, partial: source, pid: partial.pid,
                    message: "could not remove \(source.path), left by process \(pid) that no longer runs: \(error)")
            }
            let torn = partial.tornBytes > 0 ? " (a torn record of \(partial.tornBytes) bytes dropped)" : ""
            return RecoveryOutcome(
                kind: .cleared, partial: source, pid: partial.pid,
                message: "removed \(source.path): process \(pid) is gone and had recorded nothing there\(torn)")
        }

        func recover(_ partial: PartialRecording, into target: URL) throws -> RecoveryOutcome? {
            let source = parent.appendingPathComponent(partial.name)
            let pid = partial.pid ?? 0
            guard let adopted = try adopt(partial) else { return nil }
            if partial.closed {
                let meta = try? JSONDecoder().decode(
                    CassetteMeta.self, from: Data(contentsOf: adopted.appendingPathComponent("meta.json")))
                RecordingRecovery.removeLeftovers(in: adopted)
                try place(adopted, at: target)
                return RecoveryOutcome(
                    kind: .moved, partial: source, pid: partial.pid, cassette: target,
                    message:
                        "process \(pid) was killed after it closed its cassette (\(meta?.entries ?? 0) entries) but "
                        + "before the cassette took its place: moved whole from \(source.path) to \(target.path)"
                        + because(target))
            }
            let recovery = try RecordingRecovery.writeCassette(in: adopted, pid: pid, partial: partial.name)
            try place(adopted, at: target)
            return RecoveryOutcome(
                kind: .recovered, partial: source, pid: partial.pid, cassette: target, recovery: recovery,
                message:
                    "recovered the recording process \(pid) was making when it was killed (\(recovery.summary)) "
                    + "from \(source.path) into \(target.path), marked incomplete" + because(target))
        }

        /// Why a recovery went beside the cassette folder, naming both; nothing when it became the folder.
        func because(_ target: URL) -> String {
            guard target != directory else { return "" }
            return directoryWasFree
                ? "; beside \(directory.path), since this recording takes that folder's place when it closes"
                : "; beside \(directory.path), which holds a cassette (or other files) already and is left as it is"
        }

        /// Moves the finished folder to `target` in one rename: its bodies move with it, never copied. A
        /// target that is an empty folder is replaced; one that holds anything is not, and that fails.
        func place(_ folder: URL, at target: URL) throws {
            guard rename(folder.path, target.path) == 0 else {
                let code = errno
                throw RecoveryFailure.cannotMove(folder.lastPathComponent, to: target.path, errno: code)
            }
        }
    }

    /// Turns a killed recording's folder into a cassette in place: `traffic.har` from the journal's whole
    /// records (those whose body file is whole), only the bodies they name kept, `meta.json` marked
    /// incomplete with what was dropped, and the journal removed last, so that a recovery killed in
    /// turn can be done again.
    static func writeCassette(in folder: URL, pid: Int32, partial: String) throws -> CassetteMeta.Recovery {
        let manager = FileManager.default
        let journalURL = folder.appendingPathComponent(CassetteRecorder.journalName)
        // No journal: nothing was journaled (a transcript or a closed cassette is what holds the
        // recording). One that cannot be read fails the recovery, and the folder stays as it is.
        var journal = Data()
        if manager.fileExists(atPath: journalURL.path) {
            do {
                journal = try Data(contentsOf: journalURL)
            } catch {
                throw RecoveryFailure.journalUnreadable(journalURL.path, error: error.localizedDescription)
            }
        }
        let reading = JournalReading.read(journal)
        var kept: [HAR.Entry] = []
        var missingBodies = 0
        for entry in reading.entriesInOrder {
            if let file = entry.response.content.file {
                guard BodyStore.isStoredName(file),
                    size(folder.appendingPathComponent(file)) == entry.response.bodySize
                else {
                    missingBodies += 1
                    continue
                }
            }
            kept.append(entry)
        }
        // Bodies of exchanges in flight when the process died (`.partial-…` spills, or a body whose
        // record never reached the journal) belong to nothing.
        let referenced = Set(kept.compactMap(\.response.content.file))
        removeLeftovers(in: folder) { !referenced.contains("bodies/" + $0) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        let har = HAR(log: HAR.Log(creator: HAR.Creator(name: HAR.creatorName, version: "1"), entries: kept))
        do {
            let tornTranscriptBytes = try trimTranscripts(in: folder)
            try encoder.encode(har).write(to: folder.appendingPathComponent("traffic.har"), options: .atomic)
            let recovery = CassetteMeta.Recovery(
                pid: pid, partial: partial, recoveredAt: Date().formatted(.iso8601), exchanges: kept.count,
                tornBytes: reading.tornBytes, unreadableLines: reading.unreadableLines, missingBodies: missingBodies,
                tornTranscriptBytes: tornTranscriptBytes)
            var meta = CassetteMeta(
                scenario: nil, harnessYmlSha256: nil, seeds: [:],
                recordedAt: kept.first?.startedDateTime ?? recovery.recoveredAt)
            meta.complete = false
            meta.entries = kept.count
            meta.recovered = recovery
            try encoder.encode(meta).write(to: folder.appendingPathComponent("meta.json"), options: .atomic)
            if manager.fileExists(atPath: journalURL.path) {
                // Lines that could not be read are kept with the cassette, for a person to look at.
                if reading.unreadableLines.isEmpty {
                    try manager.removeItem(at: journalURL)
                } else {
                    try manager.moveItem(
                        at: journalURL, to: folder.appendingPathComponent(CassetteRecorder.journalName + ".damaged"))
                }
            }
            return recovery
        } catch {
            throw RecoveryFailure.cassetteUnwritable(in: folder.path, error: error.localizedDescription)
        }
    }

    /// Cuts each transcript back to its last whole line: a line the process was writing when it died
    /// would make the transcript unreadable. Returns the bytes cut.
    static func trimTranscripts(in folder: URL) throws -> Int {
        let transcripts = folder.appendingPathComponent("transcripts")
        var cut = 0
        for name in (try? FileManager.default.contentsOfDirectory(atPath: transcripts.path)) ?? [] {
            let url = transcripts.appendingPathComponent(name)
            guard kind(of: url) == .typeRegular, let data = FileManager.default.contents(atPath: url.path),
                let last = data.last, last != UInt8(ascii: "\n")
            else { continue }
            let keep = data.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
            let handle = try FileHandle(forWritingTo: url)
            defer { try? handle.close() }
            try handle.truncate(atOffset: UInt64(keep))
            cut += data.count - keep
        }
        return cut
    }

    /// Removes the body files `unwanted` names (by default the spills of bodies still streaming) from a
    /// folder that is becoming a cassette, and its journal once `meta.json` is written. A file that will
    /// not go is left: the cassette reads the same with it.
    static func removeLeftovers(in folder: URL, unwanted: (String) -> Bool = { $0.hasPrefix(".partial-") }) {
        let manager = FileManager.default
        let journal = folder.appendingPathComponent(CassetteRecorder.journalName)
        if manager.fileExists(atPath: journal.path),
            manager.fileExists(atPath: folder.appendingPathComponent("meta.json").path)
        {
            // Left, it is removed next time: the cassette reads the same with it.
            try? manager.removeItem(at: journal)
        }
        let bodies = BodyStore(cassette: folder).directory
        for name in (try? manager.contentsOfDirectory(atPath: bodies.path)) ?? [] where unwanted(name) {
            // Left, it is removed next time: no entry names a partial body.
            try? manager.removeItem(at: bodies.appendingPathComponent(name))
        }
    }
}
