import Foundation
import TestSupport
import Testing

/// FakeParse acknowledges a write only once SQLite has committed it: `kill -9` of `harness serve` right
/// after the last acknowledgement, again and again, loses nothing, and `--fresh` starts from empty.
@Suite struct ParseDurabilityTests {
    static let rounds = 8
    static let installationsPerRound = 25

    @Test func killedRightAfterItsAcknowledgementsItLosesNoInstallation() async throws {
        let state = try PackagePaths.temporaryDirectory().appendingPathComponent("state")
        var acknowledged = 0
        for round in 0..<Self.rounds {
            let serve = try await ServedHarness("parse-kill-\(round)", stateDirectory: state)
            let stored = try await Self.count(serve)
            #expect(
                stored == acknowledged,
                "round \(round): \(stored) installations after a restart, \(acknowledged) acknowledged")
            // One curl, one connection, the writes one after another: each answer is an acknowledgement.
            var arguments: [String] = []
            for index in 0..<Self.installationsPerRound {
                if index > 0 { arguments.append("--next") }
                let body = #"{"deviceType":"ios","installationId":"r\#(round)-\#(index)","appIdentifier":"com.x"}"#
                arguments += Self.headers(serve, master: false).flatMap { ["-H", $0] }
                arguments += [
                    "--silent", "--output", "/dev/null", "--write-out", "%{http_code}\n", "-H",
                    "Content-Type: application/json", "--data-binary", body, serve.url("parse") + "/installations",
                ]
            }
            let result = try await ChildProcess.run("curl", arguments)
            let statuses = result.standardOutput.split(separator: "\n")
            acknowledged += statuses.filter { $0 == "201" }.count
            #expect(statuses.count == Self.installationsPerRound, "\(result.transcript)")
            serve.process.send(SIGKILL)
            _ = await serve.process.waitForExit()
        }
        let last = try await ServedHarness("parse-kill-last", stateDirectory: state)
        let survived = try await Self.count(last)
        #expect(await last.stop() == 0)
        let fresh = try await ServedHarness("parse-kill-fresh", arguments: ["--fresh"], stateDirectory: state)
        let afterFresh = try await Self.count(fresh)
        #expect(await fresh.stop() == 0)
        #expect(acknowledged == Self.rounds * Self.installationsPerRound)
        #expect(survived == acknowledged)
        #expect(afterFresh == 0)
    }

    static func headers(_ serve: ServedHarness, master: Bool) -> [String] {
        var headers = ["X-Parse-Application-Id: \(serve.url("parse", "applicationId"))"]
        if master { headers.append("X-Parse-Master-Key: \(serve.url("parse", "masterKey"))") }
        if let key = serve.endpoints["parse"]?["clientKey"] { headers.append("X-Parse-Client-Key: \(key)") }
        return headers
    }

    /// How many installations the served Parse holds (`count=1&limit=0`).
    static func count(_ serve: ServedHarness) async throws -> Int {
        let answer = try await CurlExchange.run(
            headers(serve, master: true).flatMap { ["-H", $0] } + [
                serve.url("parse") + "/installations?count=1&limit=0"
            ])
        let object = try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any]
        return try #require(object?["count"] as? Int, "\(answer)")
    }
}
