import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Apps that connect to the device socket and then get the handshake wrong. Each launch must fail with
/// the device's own reason, at once (the launch timeout is a minute, except where silence is the
/// point), the app must hear a JSON-RPC 2.0 error it can read, and no app process may be left.
@Suite struct DeviceProtocolAbuseTests {
    /// The app: connects, sends its first line (PID and BUNDLE filled in; SILENCE sends nothing),
    /// prints the answer it gets and whether the device then closed the socket, and exits.
    static let app = """
        import os, socket, sys
        first = sys.argv[1].replace("PID", str(os.getpid())).replace("BUNDLE", os.environ["HARNESS_BUNDLE_ID"])
        s = socket.socket(socket.AF_UNIX)
        s.connect(os.environ["HARNESS_DEVICE_SOCKET"])
        if first != "SILENCE":
            s.sendall(first.encode() + b"\\n")
        replies = s.makefile("rb")
        print("answer:", replies.readline().decode().strip(), flush=True)
        # The device closes the socket after a refusal; an app then exits, as the protocol page says.
        print("then:", "closed" if replies.readline() == b"" else "more", flush=True)
        sys.exit(3)
        """

    struct Abuse: Sendable, CustomTestStringConvertible {
        var name: String
        var firstLine: String
        /// What the verdict must quote.
        var reason: String
        /// The answer the app must have read, or nil when it sent nothing.
        var answer: String?
        var launchTimeout = "60s"
        var testDescription: String { name }
    }

    static let hello =
        #"{"jsonrpc":"2.0","id":1,"method":"hello","params":{"protocolVersion":1,"bundleId":"BUNDLE","pid":PID}}"#

    static let abuses: [Abuse] = [
        Abuse(
            name: "garbage first", firstLine: "GET / HTTP/1.1",
            reason: "refused its handshake: Parse error: the line is not JSON",
            answer:
                #"{"error":{"code":-32700,"message":"Parse error: the line is not JSON"},"id":null,"jsonrpc":"2.0"}"#),
        Abuse(
            name: "unknown method first", firstLine: #"{"jsonrpc":"2.0","id":5,"method":"frobnicate","params":{}}"#,
            reason: "the first message must be a 'hello' request, not 'frobnicate'",
            answer: #""id":5"#),
        Abuse(
            name: "wrong pid", firstLine: hello.replacingOccurrences(of: "PID", with: "1"),
            reason: "no launch of com.example.abuser with pid 1 is waiting for it (the device launched it as pid",
            answer: #"{"error":{"code":1,"#),
        Abuse(
            name: "wrong version",
            firstLine: hello.replacingOccurrences(of: #""protocolVersion":1"#, with: #""protocolVersion":99"#),
            reason: "protocol version 99 is not supported; this device speaks 1",
            answer: #"{"error":{"code":-32600,"#),
        Abuse(
            name: "silence after connect", firstLine: "SILENCE",
            reason: "connected to the device socket but sent no hello within 10.0 seconds", answer: nil,
            launchTimeout: "10s"),
        Abuse(
            name: "a request without jsonrpc",
            firstLine: hello.replacingOccurrences(of: #""jsonrpc":"2.0","#, with: ""),
            reason: #"refused its handshake: Invalid Request: a message must have \"jsonrpc\": \"2.0\""#,
            answer: #""id":1,"jsonrpc":"2.0"}"#),
    ]

    @Test(arguments: abuses)
    func aBrokenHandshakeFailsTheLaunchWithTheDevicesReason(_ abuse: Abuse) async throws {
        let directory = try PackagePaths.temporaryDirectory(
            "abuse-\(abuse.name.replacingOccurrences(of: " ", with: "-"))")
        let script = directory.appendingPathComponent("app.py")
        try Self.app.write(to: script, atomically: true, encoding: .utf8)
        let quoted = "'" + abuse.firstLine.replacingOccurrences(of: "'", with: "''") + "'"
        let file = try ScenarioFixtures.writeConfiguration(
            """
            version: 1
            services:
              apns: {port: 0}
              media: {port: 0, root: \(ScenarioFixtures.media)}
              parse: {port: 0}
              device: {launchTimeout: \(abuse.launchTimeout)}
            apps:
              abuser:
                bundleId: com.example.abuser
                command: [\(PackagePaths.python), \(script.path), \(quoted)]
            scenarios:
              abuse:
                steps:
                  - launch: abuser
                expect:
                  chain: [device.app.connected]
            """, "abuse-yml-\(abuse.name.replacingOccurrences(of: " ", with: "-"))")
        let reports = file.deletingLastPathComponent().appendingPathComponent("report")
        let result = try await HarnessCommand.run(["run", "abuse", "--config", file.path, "--report-dir", reports.path])
        #expect(result.status == 1, "\(result.transcript)")
        let report = try String(contentsOf: reports.appendingPathComponent("report.json"), encoding: .utf8)
        #expect(report.contains(abuse.reason), "\(report)")
        if abuse.launchTimeout == "60s" {
            #expect(
                !result.standardOutput.contains("within 60"), "the launch waited for its timeout: \(result.transcript)")
        }
        let timeline = try String(contentsOf: reports.appendingPathComponent("timeline.jsonl"), encoding: .utf8)
        let events = timeline.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        func attribute(_ event: [String: Any], _ key: String) -> String? {
            (event["attributes"] as? [String: String])?[key]
        }
        if let answer = abuse.answer {
            let heard = events.compactMap { attribute($0, "line") }.first { $0.hasPrefix("answer:") }
            #expect(heard?.contains(answer) == true, "the app heard \(heard ?? "nothing"); timeline:\n\(timeline)")
            let then = events.compactMap { attribute($0, "line") }.first { $0.hasPrefix("then:") }
            #expect(then == "then: closed", "the device closes the socket after refusing: \(timeline)")
            let failed = events.filter { $0["kind"] as? String == "device.app.handshakeFailed" }
            #expect(failed.count == 1 && attribute(failed[0], "bundleId") == "com.example.abuser", "\(timeline)")
        }
        let launched = try #require(events.first { $0["kind"] as? String == "device.app.launched" }, "\(timeline)")
        let pid = try #require(attribute(launched, "pid").flatMap { pid_t($0) })
        // The launch ended at once, not at its timeout: the app was gone (on its own once the device had
        // answered and closed the socket, or killed after a grace) long before the minute was up.
        let exited = try #require(events.first { $0["kind"] as? String == "device.app.exited" }, "\(timeline)")
        let lasted = ((exited["elapsed"] as? Double) ?? .infinity) - ((launched["elapsed"] as? Double) ?? 0)
        if abuse.launchTimeout == "60s" {
            #expect(lasted < 30, "the app lasted \(lasted) s of its launch's 60 s timeout")
        }
        #expect(kill(pid, 0) == -1 && errno == ESRCH, "the app process \(pid) is still alive")
    }
}
