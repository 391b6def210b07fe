import FakeAPNs
import FakeParse
import Foundation
import HTTPServiceSupport
import HarnessTimeline
import TestSupport
import Testing

/// FakeParse and the FakeAPNs it pushes through, on free ports, with curl as the client.
struct ParseServices {
    var apns: FakeAPNsServer
    var parse: FakeParseServer
    var timeline: Timeline
    var directory: URL

    func close() async {
        await parse.close()
        await apns.close()
    }
}

protocol ParseServing {}

extension ParseServing {
    func start(
        directory: URL? = nil, apns existing: FakeAPNsServer? = nil, timeline: Timeline = Timeline(),
        limits: HTTPLimits = HTTPLimits(), cleanupInvalidInstallations: Bool = false
    ) async throws -> ParseServices {
        let directory = try directory ?? PackagePaths.temporaryDirectory()
        var apnsConfiguration = FakeAPNsConfiguration(credentialsDirectory: directory.appendingPathComponent("apns"))
        apnsConfiguration.port = 0
        let apns: FakeAPNsServer
        if let existing {
            apns = existing
        } else {
            apns = try await FakeAPNsServer.start(configuration: apnsConfiguration, timeline: timeline)
        }
        var configuration = FakeParseConfiguration(
            databasePath: directory.appendingPathComponent("parse.sqlite").path,
            apns: APNsProviderConfiguration(
                url: apns.url, caFile: apns.caFile.path, teamId: apns.signingKey.teamId, keyId: apns.signingKey.keyId,
                keyFile: apns.keyFile.path))
        configuration.port = 0
        configuration.masterKey = "master"
        configuration.applicationId = "app"
        configuration.limits = limits
        configuration.cleanupInvalidInstallations = cleanupInvalidInstallations
        let parse = try await FakeParseServer.start(configuration: configuration, timeline: timeline)
        return ParseServices(apns: apns, parse: parse, timeline: timeline, directory: directory)
    }

    /// One call: `body` as JSON (or the file `bodyFile`), with the master key when `master`, and
    /// `headers` ("Name: value"); returns the status, the body parsed when it is an object, the body's
    /// text and the response headers.
    func curl(
        _ services: ParseServices, _ method: String, _ path: String, master: Bool = false, body: String? = nil,
        bodyFile: String? = nil, headers: [String] = [], applicationId: String? = "app"
    ) async throws -> (status: Int, json: [String: Any], headers: String, body: String) {
        var arguments = [
            "--silent", "--show-error", "-X", method, "-H", "Content-Type: application/json", "--dump-header",
            "/dev/stderr", "--write-out", "\n%{http_code}",
        ]
        if let applicationId { arguments += ["-H", "X-Parse-Application-Id: \(applicationId)"] }
        if master { arguments += ["-H", "X-Parse-Master-Key: master"] }
        arguments += headers.flatMap { ["-H", $0] }
        if let body { arguments += ["--data-binary", body] }
        if let bodyFile { arguments += ["--data-binary", "@" + bodyFile] }
        let result = try await ChildProcess.run("curl", arguments + [services.parse.url + path])
        let lines = result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false)
        let status = Int(lines.last ?? "") ?? 0
        let text = lines.dropLast().joined(separator: "\n")
        let json = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
        return (status, json, result.standardError, text)
    }
}
