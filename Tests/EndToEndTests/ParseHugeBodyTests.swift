import Foundation
import TestSupport
import Testing

/// Bodies at and past Parse Server's limits, sent by curl to `harness serve`'s Parse: 10 MB in one
/// field is stored (under the 20 MB `maxUploadSize`), 21 MB is refused with 413, JSON nested 10,000
/// deep is refused with 400, and the server keeps answering. The bodies are written by Python and
/// sent by curl, so that no large buffer passes through the test process: only the server's handling
/// is under test.
@Suite struct ParseHugeBodyTests {
    @Test func hugeAndDeepBodiesAreAnsweredNotFatal() async throws {
        let serve = try await ServedHarness("parse-huge-bodies")
        let directory = try PackagePaths.temporaryDirectory()
        let write = try await ChildProcess.run(
            PackagePaths.python,
            [
                "-c",
                """
                import sys, pathlib
                folder = pathlib.Path(sys.argv[1])
                (folder / "large.json").write_bytes(b'{"deviceType":"ios","installationId":"big","note":"' + b"x" * 10_000_000 + b'"}')
                (folder / "too-large.json").write_bytes(b" " * (21 * 1024 * 1024))
                (folder / "deep.json").write_bytes(b'{"a":' * 10_000 + b"1" + b"}" * 10_000)
                """,
                directory.path,
            ])
        try #require(write.status == 0, "\(write.transcript)")
        var headers = ["X-Parse-Application-Id: \(serve.url("parse", "applicationId"))"]
        if let key = serve.endpoints["parse"]?["clientKey"] { headers.append("X-Parse-Client-Key: \(key)") }
        func post(_ file: String) async throws -> CurlExchange {
            try await CurlExchange.run(
                [
                    "-X", "POST", "-H", "Content-Type: application/json", "--data-binary",
                    "@" + directory.appendingPathComponent(file).path,
                ]
                    + headers.flatMap { ["-H", $0] } + [serve.url("parse") + "/installations"])
        }
        let stored = try await post("large.json")
        let refused = try await post("too-large.json")
        let nested = try await post("deep.json")
        let health = try await CurlExchange.run([serve.url("parse") + "/health"])
        #expect(serve.isAlive, "\(serve.process.output)")
        #expect(await serve.stop() == 0, "\(serve.process.output)")
        #expect(stored.status == 201, "\(stored.body.prefix(200))")
        #expect(refused.status == 413)
        #expect(refused.body == #"{"error":"request entity too large"}"#)
        #expect(nested.status == 400)
        #expect(nested.body.hasPrefix(#"{"error":"Invalid JSON"#), "\(nested.body)")
        #expect(health.status == 200)
    }
}
