import DeviceProtocol
import Foundation
import HarnessTimeline
import MediaServer
import TestSupport
import Testing

@testable import DeviceSimulator

/// nsurlsessiond's retries against the real media server and its faults: what a background task does
/// when its connection is cut, stalls, or the file changes, and what a default session does instead.
@Suite struct TransferDaemonTests {
    static let body: [UInt8] = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 17) }
    static let path = "/photos/dailyphoto.jpg"

    /// What the "app" saw: it moves the finished file to `kept`, as the tutorial's delegate does.
    actor App {
        let kept: URL
        var completion: DidCompleteParams?
        var waiters: [CheckedContinuation<DidCompleteParams, Never>] = []
        /// `didResumeAtOffset`'s offset, for a task made from resume data.
        var resumedAt: Int64?

        init(kept: URL) { self.kept = kept }

        func receive(_ event: TransferDaemon.Event) -> Bool {
            switch event {
            case .progress:
                break
            case .resumed(let params):
                resumedAt = params.fileOffset
            case .finished(let params):
                try? FileManager.default.moveItem(atPath: params.location, toPath: kept.path)
            case .completed(let params):
                completion = params
                for waiter in waiters { waiter.resume(returning: params) }
                waiters.removeAll()
            }
            return true
        }

        func completed() async -> DidCompleteParams {
            if let completion { return completion }
            return await withCheckedContinuation { waiters.append($0) }
        }
    }

    struct Run {
        var completion: DidCompleteParams
        var file: Data?
        var timeline: Timeline
        var temporaryFile: URL

        func events(_ kind: EventKind) -> [[String: String]] {
            timeline.events.filter { $0.kind == kind }.map(\.attributes.dictionary)
        }
    }

    func download(
        background: Bool = true, faults: [MediaFault], policy: (inout TransferPolicy) -> Void = { _ in }
    ) async throws -> Run {
        let root = try ScenarioFixtures.mediaRoot(photo: Self.body)
        var configuration = MediaServerConfiguration(root: root)
        configuration.port = 0
        configuration.faults = faults
        let timeline = Timeline()
        let server = try await MediaServer.start(configuration: configuration, timeline: timeline)
        var transferPolicy = TransferPolicy()
        transferPolicy.retryDelay = .milliseconds(100)
        policy(&transferPolicy)
        let daemon = TransferDaemon(timeline: timeline, policy: transferPolicy)
        let app = App(kept: root.appendingPathComponent("kept.jpg"))
        let temporaryFile = root.appendingPathComponent("CFNetworkDownload_1.tmp")
        do {
            try await daemon.createSession(
                bundleId: "com.example", SessionCreateParams(identifier: "photos", background: background))
            try await daemon.resume(
                bundleId: "com.example",
                params: DownloadTaskParams(session: "photos", taskIdentifier: 1, url: server.url + Self.path),
                temporaryFile: temporaryFile, createdInBackground: false
            ) { event in await app.receive(event) }
            let completion = await app.completed()
            await daemon.shutdown()
            await server.close()
            return Run(
                completion: completion, file: FileManager.default.contents(atPath: app.kept.path), timeline: timeline,
                temporaryFile: temporaryFile)
        } catch {
            await daemon.shutdown()
            await server.close()
            throw error
        }
    }

    func cut(_ kind: MediaFault.Kind, at byte: Int, count: Int? = 1) -> MediaFault {
        var fault = MediaFault(kind, path: Self.path, count: count)
        fault.afterBytes = byte
        return fault
    }

    /// Where the first attempt stopped: the cut, or a little before it when the client had bytes in its
    /// buffers that the reset discarded.
    func stop(_ run: Run, cutAt byte: Int) throws -> Int {
        let interrupted = try #require(run.events(.transferInterrupted).first)
        let bytes = try #require(interrupted["bytes"].flatMap { Int($0) })
        #expect((1...byte).contains(bytes), "\(interrupted)")
        return bytes
    }

    @Test func aResetBackgroundDownloadResumesWithRangeAndIfRangeToAnIdenticalFile() async throws {
        let run = try await download(faults: [cut(.reset, at: 123_456)])
        #expect(run.completion.error == nil)
        #expect(run.file == Data(Self.body))
        let stop = try stop(run, cutAt: 123_456)
        let interrupted = try #require(run.events(.transferInterrupted).first)
        #expect(interrupted["next"] == "resume from byte \(stop)")
        #expect(interrupted["code"] == "-1005")
        #expect(run.events(.transferResumed).map { $0["fromByte"] } == ["\(stop)"])
        let requests = run.events(.mediaRequest)
        #expect(requests.map { $0["status"] } == ["200", "206"])
        #expect(requests.last?["range"] == "bytes=\(stop)-")
        #expect(run.events(.transferRestarted).isEmpty)
        let completed = try #require(run.events(.transferCompleted).first)
        #expect(completed["bytes"] == "\(Self.body.count)")
    }

    @Test func withoutAcceptRangesTheRetryStartsOverAndSaysWhy() async throws {
        let run = try await download(faults: [MediaFault(.noAcceptRanges, path: Self.path), cut(.fin, at: 100_000)])
        #expect(run.completion.error == nil)
        #expect(run.file == Data(Self.body))
        #expect(run.events(.transferInterrupted).first?["next"] == "restart from zero")
        let restarted = try #require(run.events(.transferRestarted).first)
        #expect(restarted["why"] == "the server sent no Accept-Ranges: bytes")
        #expect(restarted["lostBytes"] == "\(try stop(run, cutAt: 100_000))")
        #expect(run.events(.mediaRequest).map { $0["range"] } == ["", ""], "no Range is sent to such a server")
        #expect(run.events(.transferResumed).isEmpty)
    }

    @Test func aFileThatChangedMeanwhileIsDownloadedWhole() async throws {
        // The second request sees a new ETag: If-Range no longer matches, so the server sends all of it.
        let run = try await download(faults: [
            cut(.reset, at: 50_000), MediaFault(.changeETag, path: Self.path, count: 2),
        ])
        #expect(run.completion.error == nil)
        #expect(run.file == Data(Self.body))
        let requests = run.events(.mediaRequest)
        #expect(requests.map { $0["status"] } == ["200", "200"])
        #expect(requests.last?["range"] == "bytes=\(try stop(run, cutAt: 50_000))-")
        let restarted = try #require(run.events(.transferRestarted).first)
        #expect(restarted["why"]?.contains("answered 200 to Range with If-Range") == true, "\(restarted)")
    }

    @Test func aStallTimesOutAndTheRetryResumes() async throws {
        // Ten seconds without data: the first 70,000 bytes always arrive well within it, however loaded
        // the machine, so the timeout is the stall's.
        let run = try await download(faults: [cut(.stall, at: 70_000)]) { $0.requestTimeout = .seconds(10) }
        #expect(run.completion.error == nil)
        #expect(run.file == Data(Self.body))
        let interrupted = try #require(run.events(.transferInterrupted).first)
        #expect(interrupted["code"] == "-1001", "timed out: \(interrupted)")
        #expect(interrupted["next"] == "resume from byte \(try stop(run, cutAt: 70_000))")
    }

    @Test func aDefaultSessionFailsAtOnceAndKeepsAPartialFileOnlyAsResumeData() async throws {
        let run = try await download(background: false, faults: [cut(.reset, at: 10_000)])
        #expect(run.completion.error?.code == -1005)
        #expect(run.events(.transferInterrupted).isEmpty)
        #expect(run.events(.mediaRequest).count == 1)
        #expect(run.file == nil)
        // Bytes that reached the file are kept for a resume, and named in the error; none, nothing kept.
        let resumeData = run.completion.error?.resumeData.flatMap(ResumeData.init(encoded:))
        #expect(FileManager.default.fileExists(atPath: run.temporaryFile.path) == (resumeData != nil))
        #expect(resumeData.map { $0.file == run.temporaryFile.path } ?? true)
    }

    @Test func retriesBackOffAndGiveUpAtTheResourceTimeout() async throws {
        let run = try await download(faults: [MediaFault(.closeBeforeHeaders, path: Self.path)]) {
            $0.retryDelay = .milliseconds(200)
            $0.resourceTimeout = .seconds(6)
        }
        #expect(run.completion.error?.code == -1005, "\(String(describing: run.completion.error))")
        // Attempts at about 0, 0.2, 0.6, 1.4 and 3 s; the next would start at 6.2 s, past the 6 s allowed.
        // A loaded machine may lose retries to the deadline (all of them, when the first attempt alone
        // outlasts it), never gain one.
        let delays = run.events(.transferInterrupted).map { $0["retryIn"] ?? "" }
        #expect((0...4).contains(delays.count), "\(delays)")
        #expect(delays == Array(["0.2 seconds", "0.4 seconds", "0.8 seconds", "1.6 seconds"].prefix(delays.count)))
        #expect(run.events(.transferInterrupted).allSatisfy { $0["next"] == "start" })
        #expect(run.events(.transferFailed).count == 1)
    }
}

/// Resume data (ios.md U11): what a cancellation or a failure hands the app, and a task made from it.
@Suite struct ResumeDataTests {
    static let body = TransferDaemonTests.body
    static let path = TransferDaemonTests.path

    struct Fixture {
        var server: MediaServer
        var daemon: TransferDaemon
        var timeline: Timeline
        var root: URL

        func start(
            _ task: Int, resumeData: String? = nil, app: TransferDaemonTests.App
        ) async throws {
            try await daemon.resume(
                bundleId: "com.example",
                params: DownloadTaskParams(
                    session: "photos", taskIdentifier: task, url: server.url + ResumeDataTests.path,
                    resumeData: resumeData),
                temporaryFile: root.appendingPathComponent("CFNetworkDownload_\(task).tmp"), createdInBackground: false
            ) { event in await app.receive(event) }
        }

        func close() async {
            await daemon.shutdown()
            await server.close()
        }
    }

    func fixture(
        background: Bool, faults: [MediaFault] = [], throttle: Int? = nil, connectionsPerHost: Int? = nil
    ) async throws -> Fixture {
        let root = try ScenarioFixtures.mediaRoot(photo: Self.body)
        var configuration = MediaServerConfiguration(root: root)
        configuration.port = 0
        configuration.faults = faults
        configuration.throttleBytesPerSecond = throttle
        let timeline = Timeline()
        let server = try await MediaServer.start(configuration: configuration, timeline: timeline)
        let daemon = TransferDaemon(timeline: timeline)
        try await daemon.createSession(
            bundleId: "com.example",
            SessionCreateParams(
                identifier: "photos", background: background, httpMaximumConnectionsPerHost: connectionsPerHost))
        return Fixture(server: server, daemon: daemon, timeline: timeline, root: root)
    }

    @Test func cancelByProducingResumeDataThenATaskFromItFinishesTheFile() async throws {
        let fixture = try await fixture(background: true, throttle: 100_000)
        let first = TransferDaemonTests.App(kept: fixture.root.appendingPathComponent("first.jpg"))
        try await fixture.start(1, app: first)
        _ = try await fixture.timeline.waitFor("some bytes", timeout: .seconds(30)) {
            $0.kind == .transferProgress && Int($0["bytes"] ?? "") ?? 0 > 0
        }
        let encoded = try await fixture.daemon.cancel(
            bundleId: "com.example", CancelTaskParams(session: "photos", taskIdentifier: 1, produceResumeData: true))
        let data = try #require(encoded.flatMap(ResumeData.init(encoded:)))
        #expect(data.bytes > 0 && data.bytes < Int64(Self.body.count))
        #expect(FileManager.default.fileExists(atPath: data.file), "the partial file is kept for the resume")
        let cancelled = await first.completed()
        #expect(cancelled.error?.code == -999)
        #expect(cancelled.error?.resumeData == encoded)

        let second = TransferDaemonTests.App(kept: fixture.root.appendingPathComponent("second.jpg"))
        try await fixture.start(2, resumeData: encoded, app: second)
        let finished = await second.completed()
        await fixture.close()
        #expect(finished.error == nil)
        #expect(FileManager.default.contents(atPath: second.kept.path) == Data(Self.body))
        #expect(await second.resumedAt == data.bytes)
        let requests = fixture.timeline.events.filter { $0.kind == .mediaRequest }
        #expect(requests.last?["range"] == "bytes=\(data.bytes)-")
        #expect(requests.last?["status"] == "206")
    }

    /// How forged resume data may point at a file that is not a partial download of this task.
    enum Forgery: String, CaseIterable {
        case fileElsewhere, symlinkInTmp, hardLinkInTmp
    }

    /// Resume data is the app's to write: one naming a file outside its tmp/, or a link in tmp/ to a
    /// "secret" of the size it claims, is not taken over; the secret stays as it is, and the download
    /// starts over.
    @Test(arguments: Forgery.allCases)
    func resumeDataNamingAFileThatIsNotADownloadIsNotTakenOver(_ forgery: Forgery) async throws {
        let fixture = try await fixture(background: true)
        let elsewhere = try PackagePaths.temporaryDirectory("forged-\(forgery)").appendingPathComponent(
            "CFNetworkDownload_secret.tmp")
        let secret = Data(repeating: 42, count: 1000)
        try secret.write(to: elsewhere)
        let named = fixture.root.appendingPathComponent("CFNetworkDownload_forged.tmp")
        switch forgery {
        case .fileElsewhere: break
        case .symlinkInTmp: try FileManager.default.createSymbolicLink(at: named, withDestinationURL: elsewhere)
        case .hardLinkInTmp: try FileManager.default.linkItem(at: elsewhere, to: named)
        }
        let forged = ResumeData(
            url: fixture.server.url + Self.path, file: forgery == .fileElsewhere ? elsewhere.path : named.path,
            bytes: 1000,
            expectedBytes: Int64(Self.body.count), validator: "\"x\"")
        let app = TransferDaemonTests.App(kept: fixture.root.appendingPathComponent("kept.jpg"))
        try await fixture.start(1, resumeData: forged.encoded, app: app)
        let finished = await app.completed()
        await fixture.close()
        #expect(finished.error == nil)
        #expect(FileManager.default.contents(atPath: elsewhere.path) == secret)
        #expect(FileManager.default.contents(atPath: app.kept.path) == Data(Self.body))
        let restarted = fixture.timeline.events.filter { $0.kind == .transferRestarted }
        #expect(restarted.map { $0["why"] } == ["the resume data names a file outside the app's tmp/"])
    }

    @Test func httpMaximumConnectionsPerHostMakesTasksTakeTurns() async throws {
        let fixture = try await fixture(background: true, throttle: 1_000_000, connectionsPerHost: 1)
        let first = TransferDaemonTests.App(kept: fixture.root.appendingPathComponent("first.jpg"))
        let second = TransferDaemonTests.App(kept: fixture.root.appendingPathComponent("second.jpg"))
        try await fixture.start(1, app: first)
        _ = try await fixture.timeline.waitFor("the first request", timeout: .seconds(10)) { $0.kind == .mediaRequest }
        try await fixture.start(2, app: second)
        #expect(await first.completed().error == nil)
        #expect(await second.completed().error == nil)
        await fixture.close()
        let events = fixture.timeline.events
        let waiting = try #require(events.first { $0.kind == .transferWaiting })
        #expect(waiting["task"] == "2")
        #expect(waiting["why"]?.contains("HTTPMaximumConnectionsPerHost (1)") == true)
        let firstDone = try #require(events.firstIndex { $0.kind == .mediaResponseFinished })
        let secondRequest = try #require(events.lastIndex { $0.kind == .mediaRequest })
        #expect(firstDone < secondRequest, "the second task's request waited for the first response")
        #expect(FileManager.default.contents(atPath: second.kept.path) == Data(Self.body))
    }

    @Test func aDefaultSessionsFailureCarriesResumeData() async throws {
        var cut = MediaFault(.reset, path: Self.path, count: 1)
        cut.afterBytes = 100_000
        let fixture = try await fixture(background: false, faults: [cut])
        let app = TransferDaemonTests.App(kept: fixture.root.appendingPathComponent("kept.jpg"))
        try await fixture.start(1, app: app)
        let failed = await app.completed()
        await fixture.close()
        #expect(failed.error?.code == -1005)
        let data = try #require(failed.error?.resumeData.flatMap(ResumeData.init(encoded:)))
        #expect(FileManager.default.fileExists(atPath: data.file))
        #expect(data.validator.hasPrefix("\""), "the strong ETag: \(data.validator)")
    }

    @Test func noResumeDataFromAServerWithoutRanges() async throws {
        var cut = MediaFault(.reset, path: Self.path, count: 1)
        cut.afterBytes = 100_000
        let fixture = try await fixture(background: false, faults: [MediaFault(.noAcceptRanges, path: Self.path), cut])
        let app = TransferDaemonTests.App(kept: fixture.root.appendingPathComponent("kept.jpg"))
        try await fixture.start(1, app: app)
        let failed = await app.completed()
        await fixture.close()
        #expect(failed.error?.code == -1005)
        #expect(failed.error?.resumeData == nil)
        #expect(
            !FileManager.default.fileExists(atPath: fixture.root.appendingPathComponent("CFNetworkDownload_1.tmp").path)
        )
    }
}

/// The app and the device never wait on each other: an app that cancels its task from inside
/// `didFinishDownloadingTo` gets its answer while the device is still waiting for the app's.
@Suite struct CancelDuringDeliveryTests {
    /// An app that, handed the finished file, cancels the task before it answers, then keeps the file.
    actor CancellingApp {
        let kept: URL
        var daemon: TransferDaemon?
        var cancelAnswer: Result<String?, any Error>?
        var completion: DidCompleteParams?
        var waiters: [CheckedContinuation<DidCompleteParams, Never>] = []

        init(kept: URL) { self.kept = kept }

        func use(_ daemon: TransferDaemon) { self.daemon = daemon }

        func receive(_ event: TransferDaemon.Event) async -> Bool {
            switch event {
            case .finished(let params):
                let cancel = CancelTaskParams(session: "photos", taskIdentifier: 1, produceResumeData: true)
                do {
                    cancelAnswer = .success(try await daemon?.cancel(bundleId: "com.example", cancel))
                } catch {
                    cancelAnswer = .failure(error)
                }
                try? FileManager.default.moveItem(atPath: params.location, toPath: kept.path)
            case .completed(let params):
                completion = params
                for waiter in waiters { waiter.resume(returning: params) }
                waiters.removeAll()
            case .progress, .resumed:
                break
            }
            return true
        }

        func completed() async -> DidCompleteParams {
            if let completion { return completion }
            return await withCheckedContinuation { waiters.append($0) }
        }
    }

    @Test func cancellingATaskThatIsHandingItsFileOverDoesNothing() async throws {
        let fixture = try await ResumeDataTests().fixture(background: true)
        let app = CancellingApp(kept: fixture.root.appendingPathComponent("kept.jpg"))
        await app.use(fixture.daemon)
        try await fixture.daemon.resume(
            bundleId: "com.example",
            params: DownloadTaskParams(
                session: "photos", taskIdentifier: 1, url: fixture.server.url + ResumeDataTests.path),
            temporaryFile: fixture.root.appendingPathComponent("CFNetworkDownload_1.tmp"), createdInBackground: false
        ) { event in await app.receive(event) }
        // Were the cancel to wait for the app's answer, app and device would wait on each other forever.
        let completion = try await withDeadline(.seconds(60), "the task's completion") { await app.completed() }
        await fixture.close()
        #expect(completion.error == nil)
        let answer = try #require(await app.cancelAnswer)
        #expect((try? answer.get()) == .some(nil), "the cancel succeeds with no resume data: \(answer)")
        #expect(FileManager.default.contents(atPath: app.kept.path) == Data(ResumeDataTests.body))
    }
}
