import DeviceSimulator
import FakeAPNs
import FakeParse
import Foundation
import HTTPServiceSupport
import HarnessTimeline
import Logging
import MediaServer
import NetworkConditions
import Processes
import PushChannel
import ServiceLifecycle
import UnixSignals

/// Every fake service of one run, the device included, in one `ServiceGroup`: bound in dependency
/// order, run together, and shut down gracefully in reverse order (the device first, FakeAPNs last).
public final class ServiceStack: Sendable {
    public let apns: FakeAPNsServer
    public let media: MediaServer
    public let parse: FakeParseServer
    /// The first device: the one device of a scenario that names none.
    public var device: DeviceSimulator { devices[0].simulator }
    /// Every device of the run, in the scenario's order, each with its push channel from FakeAPNs's
    /// gateway.
    public let devices: [RunDevice]
    /// The run's links, with a fault proxy on each TCP link its network settings name.
    public let network: NetworkLinks
    /// Where each side reaches each service: through its link's fault proxy when the link is in play.
    public let routes: ServiceRoutes
    /// What every app is told of the services (`HARNESS_MEDIA_URL`, `HARNESS_PARSE_URL`, Parse's keys).
    public let appEnvironment: [String: String]
    public let stateDirectory: URL
    private let group: ServiceGroup
    private let running: Task<Void, any Error>
    /// Settles when the group has stopped: with its error if a service failed.
    private let stopped: Readiness<Void>

    /// Binds every listener that can be bound before running, runs the group and returns once every
    /// service listens. A service that cannot start stops the group, and its error is thrown.
    ///
    /// - Parameters:
    ///   - gracefulShutdownSignals: the signals that stop the group (`harness serve` passes SIGINT and
    ///     SIGTERM; a run stops its group itself).
    ///   - teardownLimit: how long each part has to stop; one that has not is left behind and named on
    ///     `timeline` as `harness.teardown.stuck`. If the device is the stuck part, its apps' processes
    ///     are killed.
    public static func start(
        services settings: ServicesConfiguration, stateDirectory: URL, timeline: Timeline, logger: Logger,
        gracefulShutdownSignals: [UnixSignal] = [], teardownLimit: Duration = .seconds(30)
    ) async throws -> ServiceStack {
        try FileManager.default.createDirectory(at: stateDirectory, withIntermediateDirectories: true)
        let temporary = FileManager.default.temporaryDirectory
        let leftovers = LeftoverSockets.removeDead(in: temporary)
        let services = settings.forRun(
            stateDirectory: stateDirectory, socketPath: LeftoverSockets.path(in: temporary))
        // Bound but never run, a service has only its listeners to close.
        var bound: [@Sendable () async -> Void] = []
        let apns: FakeAPNsServer
        let media: MediaServer
        let parse: FakeParseServer
        var devices: [RunDevice] = []
        let network: NetworkLinks
        let providerURL: String
        do {
            apns = try await FakeAPNsServer.bind(configuration: services.apns, timeline: timeline, logger: logger)
            bound.append { await apns.close() }
            media = try await MediaServer.bind(configuration: services.media, timeline: timeline, logger: logger)
            bound.append { await media.close() }
            for (index, (name, configuration)) in services.runDevices.enumerated() {
                // A named device's events say which device they are of.
                let seen = name.map { timeline.stamping(["device": $0]) } ?? timeline
                // Each device's link draws its own faults: with one seed, a push would be lost on every
                // device or on none. The only device keeps the run's seed.
                let seed =
                    index == 0 ? services.networkSeed : services.networkSeed ^ (UInt64(index) &* 0x9E37_79B9_7F4A_7C15)
                let channel = PushChannel(
                    endpoint: GatewayEndpoint(gateway: apns.gateway, device: name, timeline: seen),
                    recorder: settings.recorder,
                    timeline: seen,
                    seed: seed)
                bound.append { await channel.close() }
                let simulator = DeviceSimulator(
                    configuration: configuration, timeline: seen, pushRegistry: channel, logger: logger)
                devices.append(RunDevice(name: name, simulator: simulator, pushChannel: channel))
            }
            network = NetworkLinks(
                inPlay: services.network.touched.union(services.networkLinksInPlay), seed: services.networkSeed,
                pushChannels: devices.map(\.pushChannel), timeline: timeline)
            bound.append { await network.shutdown() }
            providerURL = try await network.front(.parseAPNs, to: apns.url)
            parse = try FakeParseServer(
                configuration: services.parse(pushingThrough: apns, at: providerURL), timeline: timeline,
                logger: logger)
            bound.append { await parse.close() }
            for device in devices {
                try await device.simulator.bind()
                bound.append { await device.simulator.shutdown() }
            }
        } catch {
            for close in bound.reversed() { await close() }
            throw error
        }
        func part(_ name: String, _ service: any Service) -> ServiceGroupConfiguration.ServiceConfiguration {
            var bounded = BoundedTeardown(part: name, service: service, limit: teardownLimit, timeline: timeline)
            if let device = devices.first(where: { $0.part == name }) {
                bounded.whenStuck = { await device.simulator.killAppProcesses() }
            }
            // A part that ends, or fails, ends the others gracefully.
            return .init(
                service: bounded, successTerminationBehavior: .gracefullyShutdownGroup,
                failureTerminationBehavior: .gracefullyShutdownGroup)
        }
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    // First, so it stops last: Parse's pushes in flight still reach FakeAPNs.
                    part("network", ClosingService { await network.shutdown() }), part("apns", apns),
                    part("media", media), part("parse", parse),
                ]
                    + devices.flatMap { device in
                        [
                            part(device.pushChannelPart, ClosingService { await device.pushChannel.close() }),
                            part(device.part, device.simulator),
                        ]
                    },
                gracefulShutdownSignals: gracefulShutdownSignals, logger: logger))
        let stopped = Readiness<Void>()
        // The stack's own (issue 34 has the command run the group itself): stop() shuts the group down
        // and awaits this.
        let running = Task {
            do {
                try await group.run()
                stopped.succeed(())
            } catch {
                stopped.fail(error)
                throw error
            }
        }
        let routes: ServiceRoutes
        do {
            try await apns.listening()
            try await media.listening()
            try await parse.listening()
            routes = ServiceRoutes(
                appParse: try await network.front(.appParse, to: parse.url),
                backendParse: try await network.front(.backendParse, to: parse.url),
                appMedia: try await network.front(.appMedia, to: media.url),
                providerToAPNs: providerURL)
            // The transfer daemon takes the URLs the app was given, and dials its own link's way.
            let transfers = try await network.front(.transferMedia, to: media.url)
            if transfers != routes.appMedia, let from = ServiceRoutes.authority(of: routes.appMedia),
                let to = ServiceRoutes.authority(of: transfers)
            {
                for device in devices { await device.simulator.setTransferRoutes([from: to]) }
            }
            try await network.apply(services.network)
        } catch {
            await group.triggerGracefulShutdown()
            _ = await running.result
            throw error
        }
        var environment = [
            "HARNESS_MEDIA_URL": routes.appMedia,
            "HARNESS_PARSE_URL": routes.appParse,
            "HARNESS_PARSE_APPLICATION_ID": services.parse.applicationId,
        ]
        environment["HARNESS_PARSE_CLIENT_KEY"] = services.parse.clientKey
        let stack = ServiceStack(
            apns: apns, media: media, parse: parse, devices: devices, network: network,
            routes: routes, appEnvironment: environment, stateDirectory: stateDirectory, group: group,
            running: running, stopped: stopped)
        timeline.publish(.serviceStarted, source: "harness", ["service": "apns", "url": apns.url])
        timeline.publish(
            .serviceStarted, source: "harness",
            [
                "service": "media", "url": media.url,
                "throttle": media.configuration.throttleBytesPerSecond.map { "\($0) B/s" } ?? "none",
            ])
        timeline.publish(.serviceStarted, source: "harness", ["service": "parse", "url": parse.url])
        for name in leftovers {
            timeline.publish(
                "harness.leftover.removed", source: "harness", ["path": temporary.appendingPathComponent(name).path])
        }
        for device in devices { await device.simulator.setAppEnvironment(environment) }
        return stack
    }

    private init(
        apns: FakeAPNsServer, media: MediaServer, parse: FakeParseServer, devices: [RunDevice],
        network: NetworkLinks, routes: ServiceRoutes, appEnvironment: [String: String],
        stateDirectory: URL, group: ServiceGroup, running: Task<Void, any Error>,
        stopped: Readiness<Void>
    ) {
        self.apns = apns
        self.media = media
        self.parse = parse
        self.devices = devices
        self.network = network
        self.routes = routes
        self.appEnvironment = appEnvironment
        self.stateDirectory = stateDirectory
        self.group = group
        self.running = running
        self.stopped = stopped
    }

    /// Ends every device's apps and transfers (``DeviceSimulator/shutdown()``), before the rest stops.
    public func stopDevices() async {
        for device in devices { await device.simulator.shutdown() }
    }

    /// Shuts the group down gracefully and waits for it: the device kills its apps, the push channel
    /// closes, Parse finishes pushes in flight, then the media server and FakeAPNs stop, each within
    /// the teardown limit.
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = await running.result
    }

    /// Runs `work` while the services run. If the group stops first (a service failed or ended),
    /// `work` is cancelled and ``ServicesStopped`` says why.
    public func whileRunning<Value: Sendable>(_ work: @escaping @Sendable () async throws -> Value) async throws
        -> Value
    {
        try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask { try await work() }
            group.addTask {
                do {
                    try await self.waitUntilStopped()
                } catch is CancellationError {
                    return nil
                } catch {
                    throw ServicesStopped.failed(await Self.describe(error))
                }
                throw ServicesStopped.ended
            }
            defer { group.cancelAll() }
            while let next = try await group.next() {
                if let value = next { return value }
            }
            throw CancellationError()
        }
    }

    /// Returns when the group has stopped: after ``stop()``, a shutdown signal, or a service's end;
    /// throws the error of a service that failed. A cancelled caller stops waiting.
    public func waitUntilStopped() async throws {
        try await stopped.wait()
    }
}

/// One device of a run: its name (nil for the one device of a scenario that names none), the
/// simulator and its push channel.
public struct RunDevice: Sendable {
    public var name: String?
    public var simulator: DeviceSimulator
    public var pushChannel: PushChannel

    /// Its parts' names in the run's service group (and in `harness.teardown.stuck`).
    var part: String { name.map { "device \($0)" } ?? "device" }
    var pushChannelPart: String { name.map { "push channel \($0)" } ?? "push channel" }
}

/// The URLs each side of the run uses: the services' own, or their links' fault proxies'.
public struct ServiceRoutes: Sendable {
    /// `HARNESS_PARSE_URL`: the app's way to Parse (`app-parse`).
    public var appParse: String
    /// The backend's (and `push` steps') way to Parse (`backend-parse`).
    public var backendParse: String
    /// `HARNESS_MEDIA_URL`: the app's way to the media server (`app-media`); the transfer daemon dials
    /// the `transfer-media` link's proxy in its place when that link is in play.
    public var appMedia: String
    /// Parse's provider URL for FakeAPNs (`parse-apns`).
    public var providerToAPNs: String

    /// `host:port` of a URL (`[::1]:80` for IPv6).
    static func authority(of url: String) -> String? {
        guard let components = URLComponents(string: url), let host = components.host, let port = components.port
        else { return nil }
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// `url` with its `host:port` replaced by `authority`'s.
    static func url(_ url: String, at authority: String) -> String {
        guard var components = URLComponents(string: url), let colon = authority.lastIndex(of: ":"),
            let port = Int(authority[authority.index(after: colon)...])
        else { return url }
        var host = String(authority[..<colon])
        if host.hasPrefix("[") { host = String(host.dropFirst().dropLast()) }
        components.host = host
        components.port = port
        return components.string ?? url
    }
}

/// The services stopped while a run still needed them.
public enum ServicesStopped: Error, Equatable, CustomStringConvertible {
    /// A service failed (as ``ServiceStack/describe(_:)`` says it).
    case failed(String)
    /// A service ended without failing.
    case ended

    public var description: String {
        switch self {
        case .failed(let why): "the services stopped during the run: \(why)"
        case .ended: "the services stopped during the run: a service ended"
        }
    }
}
