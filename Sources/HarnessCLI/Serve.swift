import ArgumentParser
import Foundation
import HarnessCore
import HarnessTimeline
import Logging
import ServiceLifecycle

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start every fake service and write their endpoints as JSON, until Ctrl-C or SIGTERM.")

    @OptionGroup var options: ConfigOptions

    @Option(help: "Where to write the endpoints JSON file.")
    var endpoints = ".harness/endpoints.json"

    @Option(help: "Where the services keep their state (credentials, SQLite).")
    var stateDir = ".harness/serve"

    @Option(help: "The topic (bundle id) printed in the endpoints file.")
    var topic = "com.razeware.NASA-TV"

    @Flag(help: "Bind every service to a free port instead of the configured ones.")
    var ephemeralPorts = false

    func run() async throws {
        var configuration = try loadConfiguration(options.config)
        if ephemeralPorts { configuration.services.useEphemeralPorts() }
        // Nothing reads a served timeline back, so it keeps only recent events rather than growing for as
        // long as the services run.
        let timeline = Timeline(retention: 10_000)
        let stack: ServiceStack
        do {
            stack = try await ServiceStack.start(
                services: configuration.services, stateDirectory: URL(fileURLWithPath: stateDir).standardizedFileURL,
                timeline: timeline, logger: options.logger, gracefulShutdownSignals: [.sigterm, .sigint])
        } catch {
            fail(ServiceStack.describe(error), code: 2)
        }
        let file = EndpointsFile(stack: stack, configuration: configuration, topic: topic)
        let url = URL(fileURLWithPath: endpoints)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try file.json().write(to: url)
        say("services are up; endpoints written to \(url.path)")
        say(String(decoding: try file.json(), as: UTF8.self))
        // The stack's ServiceGroup owns SIGINT and SIGTERM and stops every service, the device first.
        do {
            try await stack.waitUntilStopped()
        } catch {
            fail("a service failed: \(ServiceStack.describe(error))", code: 1)
        }
        say("services stopped")
    }
}

/// The endpoints file that backends in any language read to find the fake services.
struct EndpointsFile: Encodable {
    struct APNs: Encodable {
        var url, caFile, teamId, keyId, keyFile, topic, controlURL: String
    }
    struct Media: Encodable {
        var url, controlURL: String
        /// The Apache "combined" access log.
        var accessLog: String?
    }
    struct Parse: Encodable {
        var url, applicationId, masterKey: String
        var clientKey, restAPIKey: String?
    }
    var apns: APNs
    var media: Media
    var parse: Parse

    init(stack: ServiceStack, configuration: HarnessConfiguration, topic: String) {
        apns = APNs(
            url: stack.apns.url, caFile: stack.apns.caFile.path, teamId: stack.apns.signingKey.teamId,
            keyId: stack.apns.signingKey.keyId, keyFile: stack.apns.keyFile.path, topic: topic,
            controlURL: stack.apns.controlURL)
        media = Media(
            url: stack.media.url, controlURL: stack.media.controlURL,
            accessLog: stack.media.configuration.accessLog?.path)
        let parseSettings = configuration.services.parse
        parse = Parse(
            url: stack.parse.url, applicationId: parseSettings.applicationId, masterKey: parseSettings.masterKey,
            clientKey: parseSettings.clientKey, restAPIKey: parseSettings.restAPIKey)
    }

    func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}
