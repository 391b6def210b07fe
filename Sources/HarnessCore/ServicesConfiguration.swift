import DeviceSimulator
import FakeAPNs
import FakeParse
import Foundation
import MediaServer
import NetworkConditions
import Recording

/// harness.yml's `services`: the libraries' own configurations, which the file's keys overlay. The
/// harness changes only the defaults stated in ``init(baseDirectory:)``; a run then fills in what it
/// decides itself (``forRun(stateDirectory:socketPath:)``).
public struct ServicesConfiguration: Sendable {
    public var apns: FakeAPNsConfiguration
    public var media: MediaServerConfiguration
    public var parse: FakeParseConfiguration
    public var device: DeviceConfiguration
    /// A scenario's named devices, each with its own settings; none for the one device of `device`.
    public var namedDevices: [ScenarioDevice] = []
    /// Records every link of the run into this cassette: each service's exchanges, the deliveries to
    /// the device and the apps' transcripts (``forRun(stateDirectory:socketPath:)`` hands it to each).
    public var recorder: CassetteRecorder?
    /// The run's network: a profile on the device's links, and single links' conditions.
    public var network = NetworkSettings()
    /// The profiles harness.yml and the command line may name: the built-in ones and the file's own.
    public var networkProfiles = NetworkProfiles()
    /// Links that get a fault proxy though `network` leaves them clear: a step changes them later.
    public var networkLinksInPlay: Set<NetworkLink> = []
    /// Draws the links' toxicity, jitter, loss and the push channel's faults: the same seed, the same run.
    public var networkSeed: UInt64 = 0x5EED

    /// The libraries' defaults, but for the tutorial's: NASA TV's Parse keys, and the media files under
    /// `Fixtures/media` beside harness.yml (in `baseDirectory`). docs/harness-yml.md lists every default.
    public init(baseDirectory: URL) {
        // Folders, files and sockets are the run's (forRun); these stand in until then.
        let state = baseDirectory.appendingPathComponent(".harness/state")
        apns = FakeAPNsConfiguration(credentialsDirectory: state.appendingPathComponent("apns"))
        media = MediaServerConfiguration(
            root: baseDirectory.appendingPathComponent("Fixtures/media").standardizedFileURL)
        parse = FakeParseConfiguration(
            databasePath: state.appendingPathComponent("parse.sqlite").path,
            apns: APNsProviderConfiguration(
                url: "https://127.0.0.1:\(apns.port)", caFile: nil, teamId: apns.teamId, keyId: apns.keyId,
                keyFile: ""))
        parse.applicationId = "nasa-tv"
        parse.clientKey = "nasa-tv-client-key"
        parse.restAPIKey = "nasa-tv-rest-key"
        parse.masterKey = "nasa-tv-master-key"
        device = DeviceConfiguration(
            dataDirectory: state.appendingPathComponent("device"), socketPath: state.appendingPathComponent("sock").path
        )
    }

    /// Each device of the run: its name (nil for the one device of a scenario that names none) and its
    /// settings.
    var runDevices: [(name: String?, configuration: DeviceConfiguration)] {
        namedDevices.isEmpty ? [(nil, device)] : namedDevices.map { ($0.name, $0.configuration) }
    }

    /// Port 0 everywhere: each listener takes a free port and the run tells the app which.
    public mutating func useEphemeralPorts() {
        apns.port = 0
        apns.controlPort = 0
        if apns.legacyPort != nil { apns.legacyPort = 0 }
        if apns.feedbackPort != nil { apns.feedbackPort = 0 }
        media.port = 0
        media.controlPort = 0
        parse.port = 0
    }

    /// These settings with the run's own folders and socket, the media access log in its state, and the
    /// coalescing window on the device's scaled clock (it is a policy timer). Parse's provider is set
    /// once FakeAPNs has written its credentials (``parse(pushingThrough:)``).
    func forRun(stateDirectory: URL, socketPath: String) -> ServicesConfiguration {
        var run = self
        run.apns.credentialsDirectory = stateDirectory.appendingPathComponent("apns")
        run.apns.delivery.coalescingWindow = apns.delivery.coalescingWindow * device.timeScale
        run.media.accessLog = stateDirectory.appendingPathComponent("media/access_log")
        run.parse.databasePath = stateDirectory.appendingPathComponent("parse.sqlite").path
        run.device.dataDirectory = stateDirectory.appendingPathComponent("device")
        run.device.socketPath = socketPath
        for index in run.namedDevices.indices {
            let name = run.namedDevices[index].name
            run.namedDevices[index].configuration.dataDirectory = stateDirectory.appendingPathComponent(
                "devices/\(name)")
            run.namedDevices[index].configuration.socketPath = LeftoverSockets.path(
                in: URL(fileURLWithPath: socketPath).deletingLastPathComponent())
        }
        if let recorder {
            run.apns.recorder = recorder
            run.media.recorder = recorder
            run.parse.recorder = recorder
            run.device.recorder = recorder
            for index in run.namedDevices.indices {
                run.namedDevices[index].configuration.recorder = recorder
                run.namedDevices[index].configuration.recordedName = run.namedDevices[index].name
            }
        }
        return run
    }

    /// Parse's configuration, pushing through `server` with its credentials, at `url` (its own, or
    /// the `parse-apns` link's fault proxy).
    func parse(pushingThrough server: FakeAPNsServer, at url: String) -> FakeParseConfiguration {
        var configuration = parse
        configuration.apns = APNsProviderConfiguration(
            url: url, caFile: server.caFile.path, teamId: server.signingKey.teamId,
            keyId: server.signingKey.keyId, keyFile: server.keyFile.path)
        return configuration
    }
}
