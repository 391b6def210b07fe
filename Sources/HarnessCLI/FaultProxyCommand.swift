import ArgumentParser
import FaultProxy
import Foundation
import HarnessCore
import HarnessTimeline
import Logging
import ServiceLifecycle

/// `harness fault-proxy`: the fault proxy alone, in front of anything, driven by Toxiproxy's clients.
struct FaultProxyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fault-proxy",
        abstract: "Run the fault proxy with Toxiproxy's HTTP API, until Ctrl-C or SIGTERM.")

    @Option(help: "The address the API listens on.")
    var host = "127.0.0.1"

    @Option(help: "The API's port (Toxiproxy's is 8474; 0 takes a free one).")
    var port = 8474

    @Option(
        help: ArgumentHelp(
            "A JSON array of proxies to create at start, as Toxiproxy's -config and POST /populate take.",
            valueName: "file"))
    var config: String?

    @Option(help: "Seeds the toxicity and jitter draws, for runs that repeat.")
    var seed: UInt64?

    @Flag(help: "Log what the services do, not only problems.")
    var verbose = false

    func run() async throws {
        guard (0...65535).contains(port) else { fail("--port takes 0 to 65535, not \(port)", code: 2) }
        var logger = Logger(label: "harness")
        logger.logLevel = verbose ? .debug : .error
        let timeline = Timeline.served()
        let proxy = FaultProxy(timeline: timeline, seed: seed ?? .random(in: 0...UInt64.max))
        if let config {
            guard let data = FileManager.default.contents(atPath: config) else {
                fail("--config \(config): the file cannot be read", code: 2)
            }
            let (_, error) = await proxy.populate(from: data)
            if let error {
                await proxy.shutdown()
                fail("--config \(config): \(error.message)", code: 2)
            }
        }
        let api = ToxiproxyAPI.listener(proxy: proxy, host: host, port: port, timeline: timeline, logger: logger)
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: api)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        let failure: (any Error)? = await withTaskGroup(of: Void.self) { printing in
            // Every event as a line, until the timeline finishes below (the group waits for it).
            printing.addTask {
                for await event in timeline.subscribe() {
                    if let line = EventFormatter.line(event) { say(line) }
                }
            }
            let failure: (any Error)? = await withTaskGroup(of: Void.self) { announcing in
                // Where the API listens, once it does; cancelled when the group ends first.
                announcing.addTask {
                    if let bound = try? await api.listening() { say("fault proxy API on http://\(host):\(bound)") }
                }
                defer { announcing.cancelAll() }
                return await thrownError { try await group.run() }
            }
            await proxy.shutdown()
            timeline.finish()
            return failure
        }
        if let failure { fail("\(failure)", code: 2) }
    }
}
