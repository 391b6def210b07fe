import Foundation
import HarnessTimeline
import MediaServer
import NIOPosix
import Recording

/// What a run records (`--record DIR`) or replays (`harness replay`), around the run itself.
extension ScenarioRunner {
    /// Every secret of the run's configuration, for the cassette's redaction: Parse's keys and the
    /// APNs signing key (the `.p8` file's text and its base64 body).
    static func redactor(for services: ServicesConfiguration) -> Redactor {
        var secrets: [Redactor.Secret] = [.init(name: "Parse master key", value: services.parse.masterKey)]
        if let key = services.parse.clientKey { secrets.append(.init(name: "Parse client key", value: key)) }
        if let key = services.parse.restAPIKey { secrets.append(.init(name: "Parse REST API key", value: key)) }
        return Redactor(secrets: secrets)
    }

    /// The APNs signing key and certificates the run's FakeAPNs wrote, once it has: their contents
    /// are secrets too.
    static func redactor(_ redactor: Redactor, addingFilesIn credentials: URL) -> Redactor {
        Redactor(secrets: redactor.secrets + keyMaterial(in: credentials))
    }

    /// The text of the key and certificate files in `credentials`, line by line, as secrets.
    static func keyMaterial(in credentials: URL) -> [Redactor.Secret] {
        var secrets: [Redactor.Secret] = []
        let names = (try? FileManager.default.contentsOfDirectory(atPath: credentials.path)) ?? []
        for name in names where name.hasSuffix(".p8") || name.hasSuffix(".key") || name.hasSuffix(".pem") {
            guard let text = try? String(contentsOf: credentials.appendingPathComponent(name), encoding: .utf8)
            else { continue }
            // The PEM body's lines, each long enough to be found alone.
            for line in text.split(separator: "\n") where !line.hasPrefix("-----") {
                secrets.append(.init(name: "APNs key material (\(name))", value: String(line)))
            }
        }
        return secrets
    }

    /// Closes the cassette: the run's timeline (redacted) beside the traffic, and `meta.json` saying
    /// what was recorded and whether the run got to its end.
    func closeCassette(
        _ recorder: CassetteRecorder, scenario: Scenario, outcome: RunOutcome, events: [TimelineEvent],
        seeds: [String: UInt64], redactor: Redactor, timelineAtStart: Double? = nil
    ) throws {
        var meta = CassetteMeta(
            scenario: scenario.name, harnessYmlSha256: harnessYmlSHA256, seeds: seeds,
            recordedAt: Date().formatted(.iso8601))
        // Complete when the run got to its verdict; interrupted or never set up, it holds what there was.
        switch outcome {
        case .passed, .failed, .expectedFailure: meta.complete = true
        case .interrupted, .setupError, .skipped: meta.complete = false
        }
        meta.outcome = outcome.label
        meta.run = origin?.recipe(for: scenario)
        meta.timelineAtStart = timelineAtStart
        let timeline = redactor.redact(String(decoding: try RunReport.timelineLines(events), as: UTF8.self))
        try recorder.close(meta, timeline: Data(timeline.utf8), configuration: origin?.configuration)
    }

}

extension ScenarioRunner {
    /// Removes a cassette `--record-failures` does not keep, on NIO's blocking-I/O threads (its bodies
    /// may be large). A removal that fails is said; the run's outcome stays what it was.
    func discard(_ cassette: URL, after outcome: RunOutcome, output: @Sendable (String) -> Void) async {
        do {
            try await NIOThreadPool.singleton.runIfActive { try FileManager.default.removeItem(at: cassette) }
            output("cassette: not kept (\(outcome.label); --record-failures keeps those of failed runs)")
        } catch {
            output("note: the cassette \(cassette.path) was not kept, but could not be removed: \(error)")
        }
    }
}

extension ScenarioRunner {
    /// A replay's outcome is whether it matched the recording: passed when the timelines are
    /// equivalent (whatever the scenario's own verdict was, as long as it is the recorded one), failed
    /// with the first divergence otherwise.
    func judgeReplay(
        of cassette: Cassette, into result: inout RunResult, events: [TimelineEvent],
        output: @Sendable (String) -> Void
    ) {
        switch result.outcome {
        case .setupError, .interrupted, .skipped: return
        case .passed, .failed, .expectedFailure: break
        }
        let recorded = cassette.meta?.outcome ?? "unknown"
        let now = result.outcome.label
        result.replayedVerdict = (recorded, now)
        do {
            var recordedEvents = try cassette.timeline()
            var events = events
            if let withoutBackend {
                recordedEvents = BackendScript.standingIn(
                    for: withoutBackend, in: recordedEvents, readiness: BackendStandIn.readiness)
                events = BackendScript.standingIn(for: withoutBackend, in: events, readiness: BackendStandIn.readiness)
            }
            if let divergence = TimelineComparison.compare(
                expected: recordedEvents, actual: events, options: comparison)
            {
                result.divergence = divergence
                result.outcome = .failed("the replay left the recording: \(divergence.summary)")
                result.explanation = DivergenceFormatter.text(
                    divergence, recorded: ReplayAnchor(recordedEvents), run: ReplayAnchor(events))
            } else if recorded != now {
                result.outcome = .failed("the scenario ended \(now) this time; the recording ended \(recorded)")
                result.explanation = result.outcome.failureMessage ?? ""
            } else {
                result.outcome = .passed
                result.explanation = ""
            }
        } catch {
            result.outcome = .setupError("\(error)")
        }
        switch result.outcome {
        case .passed: output("replay: equivalent to the recording (the scenario ended \(now), as recorded)")
        case .failed: output("replay: " + result.explanation)
        default: output("replay: \(result.outcome.failureMessage ?? result.outcome.label)")
        }
    }
}

extension RunOutcome {
    /// The message of a failure or an error.
    var failureMessage: String? {
        switch self {
        case .failed(let message), .setupError(let message), .expectedFailure(let message): message
        default: nil
        }
    }
}

extension ScenarioRunner {
    /// The hex SHA-256 of a file's bytes; nil when it cannot be read.
    public static func sha256(ofFile url: URL) -> String? { sha256(of: url) }
}

extension ServiceStack {
    /// The APNs key material the running FakeAPNs wrote, as secrets for a recorder.
    public static func keyMaterial(of stack: ServiceStack) -> [Redactor.Secret] {
        ScenarioRunner.keyMaterial(in: stack.apns.configuration.credentialsDirectory)
    }

    /// The redaction for a cassette of `services`: Parse's keys (the APNs key is added once written).
    public static func redactor(for services: ServicesConfiguration) -> Redactor {
        ScenarioRunner.redactor(for: services)
    }

    /// Closes a `harness serve` recording of these services: the served timeline (its recent events) and
    /// `meta.json`; adding to a cassette, its scenario and seeds are kept.
    public func closeCassette(
        _ recorder: CassetteRecorder, services: ServicesConfiguration, events: [TimelineEvent], keeping kept: Cassette?
    ) throws {
        let redactor = ScenarioRunner.redactor(
            ScenarioRunner.redactor(for: services), addingFilesIn: apns.configuration.credentialsDirectory)
        var meta =
            kept?.meta
            ?? CassetteMeta(scenario: nil, harnessYmlSha256: nil, seeds: [:], recordedAt: Date().formatted(.iso8601))
        meta.complete = true
        if kept?.meta == nil { meta.outcome = "served" }
        // A kept cassette's timeline is the recorded run's: the served one does not replace it.
        let timeline =
            kept?.timelineURL != nil
            ? nil : Data(redactor.redact(String(decoding: try RunReport.timelineLines(events), as: UTF8.self)).utf8)
        try recorder.close(meta, timeline: timeline)
    }
}
