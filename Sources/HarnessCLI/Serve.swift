import ArgumentParser
import Foundation
import HarnessCore
import HarnessTimeline
import Logging

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

    func run() async throws {
        let configuration = try loadConfiguration(options.config)
        let base = URL(fileURLWithPath: options.config).deletingLastPathComponent().standardizedFileURL
        let timeline = Timeline()
        let stack: ServiceStack
        do {
            stack = try await ServiceStack.start(
                services: configuration.services, deviceSettings: configuration.services.device, mediaThrottle: nil,
                baseDirectory: base, stateDirectory: URL(fileURLWithPath: stateDir).standardizedFileURL,
                timeline: timeline, logger: options.logger)
        } catch {
            fail("\(error)", code: 2)
        }
        let file = EndpointsFile(stack: stack, configuration: configuration, topic: topic)
        let url = URL(fileURLWithPath: endpoints)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try file.json().write(to: url)
        print("services are up; endpoints written to \(url.path)")
        print(String(decoding: try file.json(), as: UTF8.self))
        let (stopped, continuation) = AsyncStream.makeStream(of: Void.self)
        let signals = InterruptSignals { continuation.finish() }
        for await _ in stopped {}
        signals.cancel()
        await stack.stop()
        print("services stopped")
    }
}

/// The endpoints file that backends in any language read to find the fake services.
struct EndpointsFile: Encodable {
    struct APNs: Encodable {
        var url, caFile, teamId, keyId, keyFile, topic, controlURL: String
    }
    struct Media: Encodable {
        var url: String
    }
    struct Parse: Encodable {
        var url, applicationId, masterKey: String
        var clientKey: String?
    }
    var apns: APNs
    var media: Media
    var parse: Parse

    init(stack: ServiceStack, configuration: HarnessConfiguration, topic: String) {
        apns = APNs(
            url: stack.apns.url, caFile: stack.apns.caFile.path, teamId: stack.apns.signingKey.teamId,
            keyId: stack.apns.signingKey.keyId, keyFile: stack.apns.keyFile.path, topic: topic,
            controlURL: "http://127.0.0.1:\(stack.apns.controlAPI.port)")
        media = Media(url: stack.media.url)
        parse = Parse(
            url: stack.parse.url, applicationId: configuration.services.parse.applicationId,
            masterKey: configuration.services.parse.masterKey, clientKey: configuration.services.parse.clientKey)
    }

    func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}
