import DeviceSimulator
import FakeAPNs
import FakeParse
import Foundation
import HarnessTimeline
import Logging
import MediaServer
import PushChannel

/// Every fake service of one run, started in dependency order and stopped in reverse.
public final class ServiceStack: Sendable {
    public let apns: FakeAPNsServer
    public let media: MediaServer
    public let parse: FakeParseServer
    public let device: DeviceSimulator
    /// The push channel from FakeAPNs's gateway to the device.
    public let pushChannel: PushChannel
    public let stateDirectory: URL

    /// Binds every listener. If one fails, those already started are stopped before the error is thrown.
    public static func start(
        services: ServicesConfiguration, deviceSettings: DeviceSettings, baseDirectory: URL,
        stateDirectory: URL, timeline: Timeline, logger: Logger
    ) async throws -> ServiceStack {
        try FileManager.default.createDirectory(at: stateDirectory, withIntermediateDirectories: true)
        var apnsConfiguration = FakeAPNsConfiguration(
            credentialsDirectory: stateDirectory.appendingPathComponent("apns"))
        apnsConfiguration.port = services.apns.port
        apnsConfiguration.controlPort = services.apns.controlPort
        apnsConfiguration.teamId = services.apns.teamId
        apnsConfiguration.keyId = services.apns.keyId
        // The coalescing window is a policy timer: it runs on the device's scaled clock.
        apnsConfiguration.delivery.coalescingWindow = services.apns.coalescingWindow * deviceSettings.timeScale
        let apns = try await FakeAPNsServer.bind(configuration: apnsConfiguration, timeline: timeline, logger: logger)
        timeline.publish(.serviceStarted, source: "harness", ["service": "apns", "url": apns.url])

        var mediaConfiguration = MediaServerConfiguration(
            root: URL(fileURLWithPath: services.media.root, relativeTo: baseDirectory).standardizedFileURL)
        mediaConfiguration.port = services.media.port
        mediaConfiguration.controlPort = services.media.controlPort
        mediaConfiguration.throttleBytesPerSecond = services.media.throttle
        mediaConfiguration.accessLog = stateDirectory.appendingPathComponent("media/access_log")
        mediaConfiguration.faults = services.media.faults
        mediaConfiguration.settings.serverBytesPerSecond = services.media.serverThrottle
        mediaConfiguration.settings.burstBytes = services.media.burst
        mediaConfiguration.settings.firstByteDelayMilliseconds = Int(services.media.firstByteDelay / .milliseconds(1))
        mediaConfiguration.settings.latencyMilliseconds = Int(services.media.latency / .milliseconds(1))
        let media: MediaServer
        do {
            media = try await MediaServer.bind(configuration: mediaConfiguration, timeline: timeline, logger: logger)
        } catch {
            await apns.close()
            throw error
        }
        timeline.publish(
            .serviceStarted, source: "harness",
            [
                "service": "media", "url": media.url,
                "throttle": mediaConfiguration.throttleBytesPerSecond.map { "\($0) B/s" } ?? "none",
            ])

        var parseConfiguration = FakeParseConfiguration(
            databasePath: stateDirectory.appendingPathComponent("parse.sqlite").path,
            apns: APNsProviderConfiguration(
                url: apns.url, caFile: apns.caFile.path, teamId: services.apns.teamId, keyId: services.apns.keyId,
                keyFile: apns.keyFile.path))
        parseConfiguration.port = services.parse.port
        parseConfiguration.applicationId = services.parse.applicationId
        parseConfiguration.clientKey = services.parse.clientKey
        parseConfiguration.restAPIKey = services.parse.restAPIKey
        parseConfiguration.masterKey = services.parse.masterKey
        let parse: FakeParseServer
        do {
            parse = try await FakeParseServer.start(
                configuration: parseConfiguration, timeline: timeline, logger: logger)
        } catch {
            await media.close()
            await apns.close()
            throw error
        }
        timeline.publish(.serviceStarted, source: "harness", ["service": "parse", "url": parse.url])

        let temporary = FileManager.default.temporaryDirectory
        for name in LeftoverSockets.removeDead(in: temporary) {
            timeline.publish(
                "harness.leftover.removed", source: "harness", ["path": temporary.appendingPathComponent(name).path])
        }
        var deviceConfiguration = DeviceConfiguration(
            dataDirectory: stateDirectory.appendingPathComponent("device"),
            socketPath: LeftoverSockets.path(in: temporary))
        deviceConfiguration.backgroundPushBudget = deviceSettings.backgroundPushBudget
        deviceConfiguration.suspendAfterBackground = deviceSettings.suspendAfterBackground
        deviceConfiguration.launchTimeout = deviceSettings.launchTimeout
        deviceConfiguration.transfers = deviceSettings.transfers
        deviceConfiguration.pushPolicy = deviceSettings.pushPolicy
        deviceConfiguration.timeScale = deviceSettings.timeScale
        deviceConfiguration.bootLaunchDelay = deviceSettings.bootLaunchDelay
        deviceConfiguration.sessionLaunchDelay = deviceSettings.sessionLaunchDelay
        deviceConfiguration.backgroundTimeAllowance = deviceSettings.backgroundTimeAllowance
        deviceConfiguration.environment = [
            "HARNESS_MEDIA_URL": media.url,
            "HARNESS_PARSE_URL": parse.url,
            "HARNESS_PARSE_APPLICATION_ID": services.parse.applicationId,
        ]
        deviceConfiguration.environment["HARNESS_PARSE_CLIENT_KEY"] = services.parse.clientKey
        let pushChannel = PushChannel(endpoint: GatewayEndpoint(gateway: apns.gateway))
        let device = DeviceSimulator(
            configuration: deviceConfiguration, timeline: timeline, pushRegistry: pushChannel, logger: logger)
        do {
            try await device.bind()
        } catch {
            await parse.close()
            await media.close()
            await apns.close()
            throw error
        }
        return ServiceStack(
            apns: apns, media: media, parse: parse, device: device, pushChannel: pushChannel,
            stateDirectory: stateDirectory)
    }

    private init(
        apns: FakeAPNsServer, media: MediaServer, parse: FakeParseServer, device: DeviceSimulator,
        pushChannel: PushChannel, stateDirectory: URL
    ) {
        self.apns = apns
        self.media = media
        self.parse = parse
        self.device = device
        self.pushChannel = pushChannel
        self.stateDirectory = stateDirectory
    }

    /// Kills the apps, closes the push channel, then stops Parse (finishing pushes in flight), the media
    /// server and APNs. A part that has not stopped after `limit` is left behind and named on `timeline`
    /// as `harness.teardown.stuck`: a run always ends, and says what would not stop. The process's exit
    /// ends a stuck service; if the device is the stuck part, its apps' processes are killed here.
    public func stop(timeline: Timeline? = nil, limit: Duration = .seconds(30)) async {
        let parts: [(String, @Sendable () async -> Void)] = [
            ("device", { await self.device.shutdown() }), ("push channel", { await self.pushChannel.close() }),
            ("parse", { await self.parse.close() }),
            ("media", { await self.media.close() }), ("apns", { await self.apns.close() }),
        ]
        for (name, stop) in parts where !(await Self.finishes(stop, within: limit)) {
            timeline?.publish(.teardownStuck, source: "harness", ["part": name, "after": "\(limit)"])
            if name == "device" { _ = await Self.finishes({ await self.device.killAppProcesses() }, within: limit) }
        }
    }

    /// Whether `work` finished within `limit`. Work that did not is left running: a hung await cannot
    /// be taken back, only abandoned.
    static func finishes(_ work: @escaping @Sendable () async -> Void, within limit: Duration) async -> Bool {
        let decided = LockedState(false)
        return await withCheckedContinuation { continuation in
            let answer: @Sendable (Bool) -> Void = { finished in
                let first = decided.withLock { done -> Bool in
                    defer { done = true }
                    return !done
                }
                if first { continuation.resume(returning: finished) }
            }
            let timer = Task {
                do { try await Task.sleep(for: limit) } catch { return }
                answer(false)
            }
            Task {
                await work()
                answer(true)
                timer.cancel()
            }
        }
    }
}
