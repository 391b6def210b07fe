import DeviceSimulator
import FakeAPNs
import FakeParse
import Foundation
import HTTPServiceSupport
import HarnessTimeline
import Logging
import MediaServer
import PushChannel
import ServiceLifecycle
import UnixSignals

/// Every fake service of one run, the device included, in one `ServiceGroup`: bound in dependency
/// order, run together, and shut down gracefully in reverse order (the device first, FakeAPNs last).
public final class ServiceStack: Sendable {
    public let apns: FakeAPNsServer
    public let media: MediaServer
    public let parse: FakeParseServer
    public let device: DeviceSimulator
    /// The push channel from FakeAPNs's gateway to the device.
    public let pushChannel: PushChannel
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
        let device: DeviceSimulator
        let pushChannel: PushChannel
        do {
            apns = try await FakeAPNsServer.bind(configuration: services.apns, timeline: timeline, logger: logger)
            bound.append { await apns.close() }
            media = try await MediaServer.bind(configuration: services.media, timeline: timeline, logger: logger)
            bound.append { await media.close() }
            parse = try FakeParseServer(
                configuration: services.parse(pushingThrough: apns), timeline: timeline, logger: logger)
            bound.append { await parse.close() }
            pushChannel = PushChannel(endpoint: GatewayEndpoint(gateway: apns.gateway), recorder: settings.recorder)
            device = DeviceSimulator(
                configuration: services.device, timeline: timeline, pushRegistry: pushChannel, logger: logger)
            try await device.bind()
        } catch {
            for close in bound.reversed() { await close() }
            throw error
        }
        func part(_ name: String, _ service: any Service) -> ServiceGroupConfiguration.ServiceConfiguration {
            var bounded = BoundedTeardown(part: name, service: service, limit: teardownLimit, timeline: timeline)
            if name == "device" { bounded.whenStuck = { await device.killAppProcesses() } }
            // A part that ends, or fails, ends the others gracefully.
            return .init(
                service: bounded, successTerminationBehavior: .gracefullyShutdownGroup,
                failureTerminationBehavior: .gracefullyShutdownGroup)
        }
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    part("apns", apns), part("media", media), part("parse", parse),
                    part("push channel", ClosingService { await pushChannel.close() }), part("device", device),
                ],
                gracefulShutdownSignals: gracefulShutdownSignals, logger: logger))
        let stopped = Readiness<Void>()
        let running = Task {
            do {
                try await group.run()
                stopped.succeed(())
            } catch {
                stopped.fail(error)
                throw error
            }
        }
        let stack = ServiceStack(
            apns: apns, media: media, parse: parse, device: device, pushChannel: pushChannel,
            stateDirectory: stateDirectory, group: group, running: running, stopped: stopped)
        do {
            try await apns.listening()
            try await media.listening()
            try await parse.listening()
        } catch {
            await stack.stop()
            throw error
        }
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
        var environment = [
            "HARNESS_MEDIA_URL": media.url,
            "HARNESS_PARSE_URL": parse.url,
            "HARNESS_PARSE_APPLICATION_ID": services.parse.applicationId,
        ]
        environment["HARNESS_PARSE_CLIENT_KEY"] = services.parse.clientKey
        await device.setAppEnvironment(environment)
        return stack
    }

    private init(
        apns: FakeAPNsServer, media: MediaServer, parse: FakeParseServer, device: DeviceSimulator,
        pushChannel: PushChannel, stateDirectory: URL, group: ServiceGroup, running: Task<Void, any Error>,
        stopped: Readiness<Void>
    ) {
        self.apns = apns
        self.media = media
        self.parse = parse
        self.device = device
        self.pushChannel = pushChannel
        self.stateDirectory = stateDirectory
        self.group = group
        self.running = running
        self.stopped = stopped
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
                    throw ServicesStopped(why: Self.describe(error))
                }
                throw ServicesStopped(why: "a service ended")
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

/// The services stopped while a run still needed them.
public struct ServicesStopped: Error, CustomStringConvertible {
    public var why: String
    public var description: String { "the services stopped during the run: \(why)" }
}
