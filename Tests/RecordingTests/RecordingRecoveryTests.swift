import Foundation
import Recording
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What a recording killed with SIGKILL leaves beside its cassette folder, dealt with by the next run:
/// the journal recovered into a cassette marked incomplete (bodies moved, a torn last record counted),
/// a live recording left alone, an empty one cleared, and a cassette already there never overwritten.
/// The partial folders are made by a real recorder that is never closed, renamed to carry the id of a
/// process that has exited; the last test kills a real `harness serve --record`.
struct RecordingRecoveryTests {
    /// The id of a process that has exited and been reaped.
    static func deadPID() async throws -> Int32 {
        let child = try RunningChild("/bin/true", [])
        _ = await child.waitForExit()
        return child.pid
    }

    /// The partial folders beside `directory`.
    static func partials(beside directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.deletingLastPathComponent().path).filter {
            $0.hasPrefix(PartialRecording.prefix(directory: directory.lastPathComponent))
        }
    }

    static func inode(_ url: URL) -> UInt64? {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return nil }
        return UInt64(info.st_ino)
    }

    static let large = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })

    /// A recording into `directory` as a process killed with SIGKILL leaves it: two exchanges journaled
    /// (a small body inline, a large one in `bodies/`) and a transcript line, a third exchange cut
    /// mid-body (its spill file in `bodies/`), nothing closed; its folder renamed to carry `pid`.
    /// Returns the folder.
    static func killedRecording(into directory: URL, pid: Int32, exchanges: Int = 2) throws -> URL {
        let recorder = try CassetteRecorder(directory: directory, redactor: Redactor())
        if exchanges > 0 {
            recorder.transcribe(app: "com.example.App", from: .app, line: Data("{\"method\":\"hello\"}\n".utf8))
            let small = recorder.exchange(
                service: "media", link: "device→media", connection: "1", method: "GET", url: "http://h/hello.txt",
                httpVersion: "HTTP/1.1", headers: [])
            small.head(status: 200, statusText: "OK", headers: [("Content-Type", "text/plain")])
            small.write(Data("hello".utf8))
            small.finish()
        }
        if exchanges > 1 {
            let big = recorder.exchange(
                service: "media", link: "device→media", connection: "2", method: "GET", url: "http://h/big.jpg",
                httpVersion: "HTTP/1.1", headers: [])
            big.head(
                status: 200, statusText: "OK",
                headers: [("Content-Type", "image/jpeg"), ("Content-Length", "\(large.count)")])
            big.write(large)
            big.finish()
        }
        let cut = recorder.exchange(
            service: "media", link: "device→media", connection: "3", method: "GET", url: "http://h/cut.jpg",
            httpVersion: "HTTP/1.1", headers: [])
        cut.head(status: 200, statusText: "OK", headers: [("Content-Type", "image/jpeg")])
        cut.write(large.prefix(100_000))
        let name = try #require(try partials(beside: directory).first, "the recorder made its folder")
        let tag = try #require(PartialRecording.owner(ofName: name, directory: directory.lastPathComponent)?.tag)
        #expect(PartialRecording.owner(ofName: name, directory: directory.lastPathComponent)?.pid == getpid())
        let parent = directory.deletingLastPathComponent()
        // A tag of its own: the recorder, never closed, still counts its own name as a recording of this
        // process under way.
        let killed = parent.appendingPathComponent(
            PartialRecording.name(
                directory: directory.lastPathComponent, pid: pid,
                tag: (tag.hasPrefix("K") ? "Q" : "K") + tag.dropFirst()))
        try FileManager.default.moveItem(at: parent.appendingPathComponent(name), to: killed)
        return killed
    }

    @Test func aKilledRecordingsJournalBecomesAnIncompleteCassetteWithItsBodiesMoved() async throws {
        let directory = try PackagePaths.temporaryDirectory().appendingPathComponent("cassette")
        let dead = try await Self.deadPID()
        let partial = try Self.killedRecording(into: directory, pid: dead)
        let digest = CassetteRecorderTests.sha256(Self.large)
        let bodyBefore = try #require(Self.inode(partial.appendingPathComponent("bodies/\(digest)")))
        let spills = try FileManager.default.contentsOfDirectory(atPath: partial.appendingPathComponent("bodies").path)
        #expect(spills.contains { $0.hasPrefix(".partial-") }, "the cut exchange's body was streaming: \(spills)")

        let outcomes = RecordingRecovery.run(beside: directory, for: .replaying)
        #expect(outcomes.map(\.kind) == [.recovered])
        #expect(outcomes.first?.cassette?.path == directory.path)
        #expect(outcomes.first?.pid == dead)
        #expect(outcomes.first?.message.contains("process \(dead)") == true, "\(outcomes)")
        #expect(outcomes.first?.message.contains("into \(directory.path), marked incomplete") == true, "\(outcomes)")

        let cassette = try Cassette.open(directory)
        let meta = try #require(cassette.meta)
        #expect(meta.complete == false)
        #expect(meta.entries == 2)
        #expect(
            meta.recovered
                == CassetteMeta.Recovery(
                    pid: dead, partial: partial.lastPathComponent, recoveredAt: meta.recovered?.recoveredAt ?? "",
                    exchanges: 2))
        #expect(meta.incompleteness?.contains("process \(dead)") == true)
        #expect(cassette.har.log.entries.map(\.request.url) == ["http://h/hello.txt", "http://h/big.jpg"])
        #expect(cassette.body(of: 0) == .inline(Data("hello".utf8)))
        guard case .file(let body, let size) = cassette.body(of: 1) else {
            Issue.record("the large body is in bodies/")
            return
        }
        #expect(size == Self.large.count)
        #expect(try Data(contentsOf: body) == Self.large)
        #expect(Self.inode(body) == bodyBefore, "the body was moved, not copied")
        let bodies = try FileManager.default.contentsOfDirectory(
            atPath: directory.appendingPathComponent("bodies").path)
        #expect(bodies == [digest], "the cut exchange's spill is gone")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("traffic.har.journal").path))
        #expect(try Self.partials(beside: directory).isEmpty)
        #expect(RecordingRecovery.run(beside: directory, for: .replaying).isEmpty, "nothing is left to recover")
    }

    @Test func aTornLastRecordIsDroppedAndCounted() async throws {
        let directory = try PackagePaths.temporaryDirectory().appendingPathComponent("cassette")
        let partial = try Self.killedRecording(into: directory, pid: try await Self.deadPID())
        let journal = try FileHandle(forWritingTo: partial.appendingPathComponent("traffic.har.journal"))
        let torn = Data(#"{"_link":"device→media","_offset":12.5,"request":{"method":"GET","url":"http://h/c"#.utf8)
        try journal.seekToEnd()
        try journal.write(contentsOf: torn)
        try journal.close()
        let transcript = try FileHandle(
            forWritingTo: partial.appendingPathComponent("transcripts/com.example.App.jsonl"))
        let tornLine = Data(#"{"at":12.5,"from":"dev"#.utf8)
        try transcript.seekToEnd()
        try transcript.write(contentsOf: tornLine)
        try transcript.close()

        let outcomes = RecordingRecovery.run(beside: directory, for: .replaying)
        #expect(outcomes.map(\.kind) == [.recovered])
        #expect(outcomes.first?.recovery?.exchanges == 2)
        #expect(outcomes.first?.recovery?.tornBytes == torn.count)
        #expect(
            outcomes.first?.message.contains("a torn last record of \(torn.count) bytes dropped") == true, "\(outcomes)"
        )
        let cassette = try Cassette.open(directory)
        let meta = try #require(cassette.meta)
        #expect(meta.recovered?.tornBytes == torn.count)
        #expect(meta.recovered?.tornTranscriptBytes == tornLine.count)
        #expect(meta.entries == 2)
        #expect(try cassette.transcript(of: "com.example.App").map(\.from) == [.app], "the whole line stays")
    }

    @Test func aLiveRecordersPartialIsLeftAlone() throws {
        let directory = try PackagePaths.temporaryDirectory().appendingPathComponent("cassette")
        // This process records and never closes: its folder carries this process's id.
        let recorder = try CassetteRecorder(directory: directory, redactor: Redactor())
        CassetteRecorderTests.get(recorder).finish()
        let before = try Self.partials(beside: directory)
        #expect(before.count == 1)

        let outcomes = RecordingRecovery.run(beside: directory, for: .replaying)
        #expect(outcomes.map(\.kind) == [.running])
        #expect(outcomes.first?.pid == getpid())
        #expect(outcomes.first?.message.contains("under way by process \(getpid())") == true, "\(outcomes)")
        #expect(try Self.partials(beside: directory) == before)
        #expect(!FileManager.default.fileExists(atPath: directory.path))
        // The recording goes on and closes as usual.
        try recorder.close(CassetteMeta(scenario: nil, harnessYmlSha256: nil, seeds: [:], recordedAt: "now"))
        #expect(try Cassette.open(directory).har.log.entries.count == 1)
    }

    @Test func aDeadPartialWithNothingJournaledIsCleared() async throws {
        let directory = try PackagePaths.temporaryDirectory().appendingPathComponent("cassette")
        let dead = try await Self.deadPID()
        let partial = try Self.killedRecording(into: directory, pid: dead, exchanges: 0)

        let outcomes = RecordingRecovery.run(beside: directory, for: .replaying)
        #expect(outcomes.map(\.kind) == [.cleared])
        #expect(outcomes.first?.message.contains("removed \(partial.path)") == true, "\(outcomes)")
        #expect(!FileManager.default.fileExists(atPath: partial.path))
        #expect(!FileManager.default.fileExists(atPath: directory.path), "there was nothing to make a cassette of")
        #expect(try Self.partials(beside: directory).isEmpty)
    }

    @Test func anExistingCassetteIsNotOverwrittenAndBothAreNamed() async throws {
        let directory = try PackagePaths.temporaryDirectory().appendingPathComponent("cassette")
        let first = try CassetteRecorder(directory: directory, redactor: Redactor())
        CassetteRecorderTests.get(first).finish()
        try first.close(CassetteMeta(scenario: "first", harnessYmlSha256: nil, seeds: [:], recordedAt: "now"))
        let dead = try await Self.deadPID()
        _ = try Self.killedRecording(into: directory, pid: dead)

        let outcomes = RecordingRecovery.run(beside: directory, for: .replaying)
        let beside = directory.deletingLastPathComponent().appendingPathComponent("cassette.recovered-\(dead)")
        #expect(outcomes.map(\.kind) == [.recovered])
        #expect(outcomes.first?.cassette?.path == beside.path)
        let message = outcomes.first?.message ?? ""
        #expect(
            message.contains(beside.path) && message.contains("beside \(directory.path), which holds"), "\(message)")
        #expect(try Cassette.open(directory).meta?.scenario == "first", "the cassette there is as it was")
        let recovered = try Cassette.open(beside)
        #expect(recovered.meta?.recovered?.pid == dead)
        #expect(recovered.har.log.entries.count == 2)
    }

    @Test func aNewRecordingRecoversAKilledOneBesideTheFolderItWillReplace() async throws {
        let directory = try PackagePaths.temporaryDirectory().appendingPathComponent("cassette")
        let dead = try await Self.deadPID()
        _ = try Self.killedRecording(into: directory, pid: dead)

        let next = try CassetteRecorder(directory: directory, redactor: Redactor())
        #expect(next.recoveredAtStart.map(\.kind) == [.recovered])
        let beside = directory.deletingLastPathComponent().appendingPathComponent("cassette.recovered-\(dead)")
        #expect(next.recoveredAtStart.first?.cassette?.path == beside.path)
        #expect(try Cassette.open(beside).har.log.entries.count == 2)
        CassetteRecorderTests.get(next).finish()
        try next.close(CassetteMeta(scenario: "next", harnessYmlSha256: nil, seeds: [:], recordedAt: "now"))
        #expect(try Cassette.open(directory).meta?.scenario == "next")
        #expect(try Cassette.open(beside).har.log.entries.count == 2, "the recovered cassette stays")
    }

    /// `harness serve --record` killed with SIGKILL after an exchange: while it runs, replaying the
    /// folder is refused naming the recording under way; once it is dead, `harness replay` recovers the
    /// cassette and says to serve it, and `harness serve --replay` serves it, saying it is incomplete.
    @Test func aServeRecordingKilledWithSIGKILLIsRecoveredAndServedAsIncomplete() async throws {
        let folder = try PackagePaths.temporaryDirectory()
        let cassette = folder.appendingPathComponent("cassette")
        let recording = try await ServedHarness("serve-record-killed", arguments: ["--record", cassette.path])
        let pid = recording.process.pid
        // Parse's exchange is journaled before its answer goes out: once curl has it, a kill cannot lose it.
        let health = try await CurlExchange.run([recording.url("parse") + "/health"])
        #expect(health.status == 200, "\(health)")

        let refused = try await HarnessCommand.run([
            "serve", "--ephemeral-ports", "--replay", cassette.path, "--endpoints",
            folder.appendingPathComponent("endpoints.json").path, "--state-dir",
            folder.appendingPathComponent("state").path,
        ])
        #expect(refused.status == 2, "\(refused.transcript)")
        #expect(
            refused.standardError.contains("a recording into \(cassette.path) under way by process \(pid)"),
            "\(refused.transcript)")

        recording.process.send(SIGKILL)
        _ = await recording.process.waitForExit()
        let left = try Self.partials(beside: cassette)
        #expect(left.count == 1 && left[0].hasPrefix(".cassette.recording-\(pid)-"), "\(left)")

        let replay = try await HarnessCommand.run(["replay", cassette.path])
        #expect(replay.status == 2, "\(replay.transcript)")
        #expect(
            replay.standardOutput.contains("recovered the recording process \(pid) was making when it was killed"),
            "\(replay.transcript)")
        #expect(replay.standardError.contains("'harness serve --replay \(cassette.path)'"), "\(replay.transcript)")

        let served = try await ServedHarness("serve-replay-recovered", arguments: ["--replay", cassette.path])
        #expect(
            served.process.output.contains("note: \(cassette.path) is incomplete: it was recovered"),
            "\(served.process.output)")
        #expect(await served.stop() == 0)

        let opened = try Cassette.open(cassette)
        #expect(opened.meta?.complete == false)
        #expect(opened.meta?.recovered?.pid == pid)
        #expect(
            opened.har.log.entries.contains { $0.request.url.hasSuffix("/parse/health") && $0.link == "app→parse" },
            "\(opened.har.log.entries.map(\.request.url))")
        #expect(try Self.partials(beside: cassette).isEmpty)
    }

    /// A partial carrying this process's own id that none of its recorders writes in was left by an
    /// earlier process that had the same id (a container started again): recovered, not taken as
    /// a recording under way.
    @Test func aPartialOfThisProcesssIdThatNoRecorderHereWritesIsRecovered() async throws {
        let directory = try PackagePaths.temporaryDirectory().appendingPathComponent("cassette")
        let killed = try Self.killedRecording(into: directory, pid: try await Self.deadPID())
        let mine = killed.deletingLastPathComponent().appendingPathComponent(
            PartialRecording.name(directory: "cassette", pid: getpid(), tag: "Earlier1"))
        try FileManager.default.moveItem(at: killed, to: mine)
        let outcomes = RecordingRecovery.run(beside: directory, for: .replaying)
        #expect(outcomes.map(\.kind) == [.recovered], "\(outcomes.map(\.message))")
        #expect(try Cassette.open(directory).har.log.entries.count == 2)
    }

    /// A journal that is there but cannot be read may hold anything: the partial is neither cleared nor
    /// turned into an empty cassette, and stays for the next run.
    @Test func aJournalThatCannotBeReadLeavesThePartialWhole() async throws {
        let directory = try PackagePaths.temporaryDirectory().appendingPathComponent("cassette")
        let killed = try Self.killedRecording(into: directory, pid: try await Self.deadPID())
        let journal = killed.appendingPathComponent("traffic.har.journal")
        let held = killed.deletingLastPathComponent().appendingPathComponent("journal-held")
        try FileManager.default.moveItem(at: journal, to: held)
        // A folder where the journal is: it exists, and reading it fails.
        try FileManager.default.createDirectory(at: journal, withIntermediateDirectories: false)
        let outcomes = RecordingRecovery.run(beside: directory, for: .replaying)
        #expect(outcomes.map(\.kind) == [.failed], "\(outcomes.map(\.message))")
        #expect(outcomes.first?.message.contains("could not be read") == true, "\(outcomes.map(\.message))")
        #expect(!FileManager.default.fileExists(atPath: directory.path), "no empty cassette made")
        let left = try #require(try Self.partials(beside: directory).first)
        let bodies = killed.deletingLastPathComponent().appendingPathComponent(left).appendingPathComponent("bodies")
        #expect(try FileManager.default.contentsOfDirectory(atPath: bodies.path).count >= 1, "its bodies are kept")
        // Readable again, it is recovered by the next run (it now carries this process's id).
        let again = killed.deletingLastPathComponent().appendingPathComponent(left)
            .appendingPathComponent("traffic.har.journal")
        try FileManager.default.removeItem(at: again)
        try FileManager.default.moveItem(at: held, to: again)
        let second = RecordingRecovery.run(beside: directory, for: .replaying)
        #expect(second.map(\.kind) == [.recovered], "\(second.map(\.message))")
        #expect(try Cassette.open(directory).har.log.entries.count == 2)
    }

    /// A close that fails (here the folder it replaces was given a user's file meanwhile) keeps what
    /// was recorded beside the folder, says where, and the next run recovers it.
    @Test func aCloseThatFailsKeepsWhatWasRecordedForTheNextRun() async throws {
        let directory = try PackagePaths.temporaryDirectory().appendingPathComponent("cassette")
        let recorder = try CassetteRecorder(directory: directory, redactor: Redactor())
        let exchange = recorder.exchange(
            service: "media", link: "device→media", connection: "1", method: "GET", url: "http://h/a.txt",
            httpVersion: "HTTP/1.1", headers: [])
        exchange.head(status: 200, statusText: "OK", headers: [("Content-Type", "text/plain")])
        exchange.write(Data("kept".utf8))
        exchange.finish()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: directory.appendingPathComponent("notes.txt"))
        let meta = CassetteMeta(scenario: "s", harnessYmlSha256: nil, seeds: [:], recordedAt: "now")
        do {
            try recorder.close(meta)
            Issue.record("the close replaced a folder holding a user's file")
        } catch {
            #expect("\(error)".contains("what was recorded is kept in"), "\(error)")
        }
        #expect(try Self.partials(beside: directory).count == 1)
        try FileManager.default.removeItem(at: directory.appendingPathComponent("notes.txt"))
        let outcomes = RecordingRecovery.run(beside: directory, for: .replaying)
        // It was closed (meta.json written) before the replacing failed: moved whole.
        #expect(outcomes.map(\.kind) == [.moved], "\(outcomes.map(\.message))")
        #expect(try Cassette.open(directory).har.log.entries.count == 1)
    }

    /// A recording that added to a cassette and was killed left its journal inside the folder: the next
    /// one that adds to it moves that journal aside, whole, instead of deleting it.
    @Test func anInterruptedAddingRecordingsJournalIsMovedAsideNotDeleted() async throws {
        let directory = try PackagePaths.temporaryDirectory().appendingPathComponent("cassette")
        let first = try CassetteRecorder(directory: directory, redactor: Redactor())
        try first.close(CassetteMeta(scenario: "s", harnessYmlSha256: nil, seeds: [:], recordedAt: "now"))
        let journal = directory.appendingPathComponent("traffic.har.journal")
        let interrupted = Data("{\"a whole line\": 1}\n{\"torn".utf8)
        try interrupted.write(to: journal)
        let adding = try CassetteRecorder(
            directory: directory, redactor: Redactor(), keeping: try Cassette.open(directory))
        let aside = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasPrefix("traffic.har.journal.interrupted-")
        }
        #expect(aside.count == 1, "\(aside)")
        #expect(try Data(contentsOf: directory.appendingPathComponent(aside[0])) == interrupted)
        try adding.close(CassetteMeta(scenario: "s", harnessYmlSha256: nil, seeds: [:], recordedAt: "now"))
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent(aside[0]).path))
    }
}
