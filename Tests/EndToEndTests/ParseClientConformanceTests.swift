import Foundation
import TestSupport
import Testing

/// Parse REST clients nobody here wrote, against `harness serve`'s FakeParse: the REST guide's own
/// request examples made with Python's http.client (Tests/Conformance/parse_rest_guide.py), and
/// parse-client from PyPI (Tests/Conformance/parse_client_conformance.py). Each script prints its
/// checks; every one must hold.
@Suite struct ParseClientConformanceTests {
    @Test(arguments: ["parse_rest_guide.py", "parse_client_conformance.py"])
    func aThirdPartyClientCreatesQueriesAndPushesUnchanged(script: String) async throws {
        let serve = try await ServedHarness("parse-conformance-\(script)")
        let topic = serve.url("apns", "topic")
        let registered = try await CurlExchange.json(
            "POST", serve.url("apns", "controlURL") + "/devices", #"{"topic": "\#(topic)"}"#)
        let device = try JSONSerialization.jsonObject(with: Data(registered.body.utf8)) as? [String: Any]
        let token = try #require(device?["deviceToken"] as? String, "\(registered)")
        let run = try await ChildProcess.run(
            PackagePaths.python,
            [
                PackagePaths.root.appendingPathComponent("Tests/Conformance/\(script)").path, serve.url("parse"),
                serve.url("parse", "applicationId"), serve.url("parse", "masterKey"), token, topic,
                serve.url("parse", "clientKey"),
            ], timeout: .seconds(300))
        #expect(await serve.stop() == 0, "\(serve.process.output)")
        #expect(run.status == 0, "\(run.transcript)")
        let report = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any]
        let checks = try #require(report?["checks"] as? [[String: Any]], "\(run.transcript)")
        #expect(checks.count >= 20, "\(checks.count) checks")
        for failed in checks where failed["ok"] as? Bool != true {
            Issue.record("\(failed["name"] ?? "?"): \(failed["detail"] ?? "")")
        }
    }
}
