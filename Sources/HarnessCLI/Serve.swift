import ArgumentParser
import Foundation
import HarnessCore
import HarnessTimeline
import Logging
import MediaServer
import NIOCore
import Recording
import ServiceLifecycle

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start every fake service and write their endpoints as JSON, until Ctrl-C or SIGTERM.")

    @OptionGroup var options: ConfigOptions

    @Option(help: "Where to write the endpoints JSON file.")
    var endpoints = ".harness/endpoints.json"

    @Option(help: "Where the services keep their state (credentials, SQLite).")
    var stateDir = ".harness/serve"

    @Flag(
        help: "Start Parse from empty: delete the installations and push statuses kept in the state dir's parse.sqlite."
    )
    var fresh = false

    @Option(help: "The topic (bundle id) printed in the endpoints file.")
    var topic = "com.razeware.NASA-TV"

    @Flag(help: "Bind every service to a free port instead of the configured ones.")
    var ephemeralPorts = false

    @Option(
        help: ArgumentHelp(
            "The folder the media server serves, in place of harness.yml's (without a harness.yml: .harness/media).",
            valueName: "dir"))
    var mediaRoot: String?

    @Option(
        help: ArgumentHelp(
            "A cassette: a folder 'harness run --record' or '--record-mode all' wrote, or a HAR file (the media server answers from it).",
            valueName: "path"))
    var cassette: String?

    @Option(help: "What to do with --cassette, as vcrpy: once, new_episodes, none, all.")
    var recordMode: String = RecordMode.once.rawValue

    @Option(
        help: ArgumentHelp(
            "Record every link's traffic into a new cassette (--cassette DIR --record-mode all).", valueName: "dir"))
    var record: String?

    @Option(
        help: ArgumentHelp(
            "Serve the media from a cassette only (--cassette PATH --record-mode none).", valueName: "path"))
    var replay: String?

    @Option(
        help: ArgumentHelp(
            "Put the media server in front of this server, forwarding what it does not replay.", valueName: "url"))
    var mediaUpstream: String?

    @OptionGroup var matching: MatchingOptions

    @Flag(
        help: ArgumentHelp(
            "Send the cassette's recorded pushes to Parse again, each at its recorded time from the start "
                + "(with --replay, or --cassette in a mode that replays), in place of the backend that sent them."))
    var replayPushes = false

    func run() async throws {
        Self.oneEventLoopMoreThanCores()
        _ = matching.resolved()
        if replayPushes {
            // A recording would keep the replayed pushes as new ones, to be sent twice next time.
            guard replay != nil || cassette != nil, record == nil, recordMode == RecordMode.once.rawValue else {
                fail(
                    "--replay-pushes replays a cassette without recording: use it with --replay PATH, or --cassette "
                        + "PATH in the once mode", code: 2)
            }
        }
        var configuration = try servedConfiguration()
        if ephemeralPorts { configuration.services.useEphemeralPorts() }
        let (recorder, replayed, adding) = try setUpCassette(&configuration.services)
        if replayPushes, replayed == nil { say("note: --replay-pushes: the cassette is being recorded, not replayed") }
        // The recorded pushes are due on a clock that starts where a recording's does.
        let pushes =
            replayPushes
            ? replayed.map { PushSchedule(RecordedPushes(entries: $0.har.log.entries), startingAt: .now) } : nil
        let timeline = Timeline.served()
        let state = URL(fileURLWithPath: stateDir).standardizedFileURL
        if fresh {
            // SQLite's WAL mode keeps the database in three files; all go.
            // One that cannot be removed would make the start anything but fresh: it is said, and nothing starts.
            for suffix in ["", "-wal", "-shm"] {
                let file = state.appendingPathComponent("parse.sqlite" + suffix)
                guard FileManager.default.fileExists(atPath: file.path) else { continue }
                do {
                    try FileManager.default.removeItem(at: file)
                } catch {
                    fail("--fresh: \(file.path) cannot be removed: \(FileProblem.describe(error))", code: 2)
                }
            }
        }
        let stack: ServiceStack
        do {
            stack = try await ServiceStack.start(
                services: configuration.services, stateDirectory: state,
                timeline: timeline, logger: options.logger, gracefulShutdownSignals: [.sigterm, .sigint])
        } catch {
            fail(await ServiceStack.describe(error), code: 2)
        }
        recorder?.redact(also: ServiceStack.keyMaterial(of: stack))
        let file = Endpoints(stack: stack, parse: configuration.services.parse, topic: topic)
        let url = URL(fileURLWithPath: endpoints)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try file.write(to: url)
        say("services are up; endpoints written to \(url.path)")
        say(String(decoding: try file.json(), as: UTF8.self))
        // The stack's ServiceGroup owns SIGINT and SIGTERM and stops every service, the device first.
        let failure: (any Error)? = await withTaskGroup(of: Void.self) { replaying in
            // The recorded pushes, each at its time, until the services stop (cancelled then).
            if let pushes { replaying.addTask { await stack.replayPushes(pushes) { say($0) } } }
            defer { replaying.cancelAll() }
            return await thrownError { try await stack.waitUntilStopped() }
        }
        if let recorder {
            do {
                try stack.closeCassette(
                    recorder, services: configuration.services, events: timeline.events,
                    keeping: adding ? replayed : nil)
                say("cassette: \(recorder.directory.path)")
            } catch {
                printError("could not finish the cassette: \(error)")
            }
        }
        if let failure { fail("a service failed: \(await ServiceStack.describe(failure))", code: 1) }
        say("services stopped")
    }

    /// harness.yml, or, when none was named and the folder has none, the documented defaults
    /// (docs/harness-yml.md), said so; `--media-root` in place of the file's media root, created when
    /// it is the default's and missing.
    private func servedConfiguration() throws -> HarnessConfiguration {
        let here = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        var configuration: HarnessConfiguration
        var root = mediaRoot.map { URL(fileURLWithPath: $0, relativeTo: here).standardizedFileURL }
        if options.config == nil, !FileManager.default.fileExists(atPath: options.path) {
            configuration = try ConfigurationLoader.parse("version: 1\n", file: "(defaults)", baseDirectory: here)
            if root == nil {
                let empty = here.appendingPathComponent(".harness/media")
                do {
                    try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
                } catch {
                    fail("\(empty.path): cannot be made: \(FileProblem.describe(error))", code: 2)
                }
                root = empty
            }
            say(
                "no harness.yml in \(here.path): serving on the defaults (docs/harness-yml.md); media from "
                    + "\(root?.path ?? "") (--media-root DIR serves another folder; 'harness init' writes a harness.yml)"
            )
        } else {
            configuration = try loadConfiguration(options.path)
        }
        if let root {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root.path, isDirectory: &isFolder), isFolder.boolValue else {
                fail("--media-root: \(root.path) is not a folder", code: 2)
            }
            configuration.services.media.root = root
        }
        return configuration
    }

    /// The media server's cassette, upstream and recording, as the options ask: the recorder to close
    /// at the end, if any, the cassette replayed, if any, and whether the recording adds to it. Exits 2
    /// when the options cannot work together or the cassette is unusable.
    private func setUpCassette(_ services: inout ServicesConfiguration) throws -> (
        recorder: CassetteRecorder?, replayed: Cassette?, adding: Bool
    ) {
        let chosen = [cassette, record, replay].compactMap { $0 }
        guard chosen.count <= 1 else { fail("use one of --cassette, --record and --replay", code: 2) }
        if let mediaUpstream {
            guard let url = URL(string: mediaUpstream), ["http", "https"].contains(url.scheme ?? ""), url.host != nil
            else { fail("--media-upstream takes an http:// or https:// URL, not '\(mediaUpstream)'", code: 2) }
            services.media.upstream = MediaUpstream(url: mediaUpstream)
        }
        guard let path = chosen.first else { return (nil, nil, false) }
        let mode: RecordMode
        if record != nil {
            mode = .all
        } else if replay != nil {
            mode = .none
        } else {
            guard let parsed = RecordMode(rawValue: recordMode) else {
                let modes = RecordMode.allCases.map(\.rawValue).joined(separator: ", ")
                fail("--record-mode takes one of \(modes), not '\(recordMode)'", code: 2)
            }
            mode = parsed
        }
        let url = URL(fileURLWithPath: path).standardizedFileURL
        // What a killed recording left beside the cassette is dealt with before anything is decided:
        // recovered, it may be the cassette replayed (docs/cassettes.md, "A recording cut short").
        let recoveries = RecordingRecovery.run(beside: url, for: mode == .none ? .replaying : .recording)
        for outcome in recoveries where outcome.acted { say(outcome.message) }
        for outcome in recoveries where outcome.kind == .failed { printError(outcome.message) }
        var isFolder: ObjCBool = false
        let present = FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder)
        let exists =
            present
            && (!isFolder.boolValue
                || FileManager.default.fileExists(atPath: url.appendingPathComponent("meta.json").path))
        let plan: CassettePlan
        switch CassettePlan.decide(mode: mode, cassetteExists: exists, hasUpstream: mediaUpstream != nil) {
        case .success(let decided): plan = decided
        case .failure(let refusal):
            // A recording under way (or one an older harness left) is why there is none: say so.
            let beside = recoveries.filter { [.running, .unowned].contains($0.kind) }.map { "; " + $0.message }
            fail("--record-mode \(mode.rawValue) with \(path): \(refusal)" + beside.joined(), code: 2)
        }
        for outcome in recoveries where [.running, .unowned].contains(outcome.kind) { say("note: \(outcome.message)") }
        do {
            var kept: Cassette?
            if plan.replays {
                let opened = try Cassette.open(url)
                if opened.meta?.complete == false, let why = opened.meta?.incompleteness {
                    say("note: \(path) is incomplete: \(why)")
                }
                for skipped in Playback.skipped(entries: opened.har.log.entries, service: "media") {
                    say("warning: \(path): \(skipped)")
                }
                services.media.replay = MediaReplay(cassette: opened, matching: matching.resolved())
                kept = opened
            }
            if !plan.passesThrough { services.media.upstream = nil }
            switch plan.recording {
            case .none:
                return (nil, kept, false)
            case .fresh:
                let recorder = try CassetteRecorder(directory: url, redactor: ServiceStack.redactor(for: services))
                services.recorder = recorder
                return (recorder, kept, false)
            case .adding:
                guard isFolder.boolValue else {
                    fail("--record-mode new_episodes adds to a cassette folder, not a HAR file (\(path))", code: 2)
                }
                let recorder = try CassetteRecorder(
                    directory: url, redactor: ServiceStack.redactor(for: services), keeping: kept)
                services.recorder = recorder
                return (recorder, kept, true)
            }
        } catch let error as CassetteError {
            fail(error.description, code: 2)
        }
    }
}

extension Serve {
    /// The services' clients share the machine with them (a backend under test, a load generator): with
    /// one event loop a core, a closed loop of requests leaves the cores idle part of the time, and one
    /// loop more fills those gaps (FakeAPNs answered a tenth more pushes a second on two cores,
    /// docs/benchmarks.md). `NIO_SINGLETON_GROUP_LOOP_COUNT`, when set, still decides. Called once, before
    /// anything uses NIO's event loops.
    static func oneEventLoopMoreThanCores() {
        guard ProcessInfo.processInfo.environment["NIO_SINGLETON_GROUP_LOOP_COUNT"] == nil else { return }
        NIOSingletons.groupLoopCountSuggestion = System.coreCount + 1
    }
}
