import FakeAPNs
import Foundation
import TestSupport

extension FakeAPNsServer {
    /// Posts one push with curl over HTTP/2, with a provider token signed by Python, as a backend in
    /// another language would; returns the HTTP status curl saw.
    func curlPush(
        to token: String, topic: String = "com.example.app", headers: [String] = [],
        body: String = #"{"aps":{"content-available":1}}"#
    ) async throws -> String {
        let jwt = try await PythonProviderToken.sign(
            keyFile: keyFile.path, keyId: signingKey.keyId, teamId: signingKey.teamId)
        var arguments = [
            "--silent", "--http2", "--cacert", caFile.path, "--output", "/dev/null", "--write-out", "%{http_code}",
            "-H", "authorization: bearer \(jwt)", "-H", "apns-topic: \(topic)",
        ]
        for header in headers { arguments += ["-H", header] }
        arguments += ["--data", body, "\(url)/3/device/\(token)"]
        return try await ChildProcess.run("curl", arguments).standardOutput
    }
}
