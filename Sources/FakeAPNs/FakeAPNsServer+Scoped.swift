import Foundation
import HarnessTimeline

extension FakeAPNsServer {
    /// Starts FakeAPNs on free ports for the duration of `body` and closes it afterwards, also when
    /// `body` throws: the way a Swift test uses it, as JVM teams use pushy's mock server.
    ///
    /// ```swift
    /// try await FakeAPNsServer.withServer { apns in
    ///     let token = apns.gateway.register(topic: "com.example.app") { _ in }
    ///     // point the code under test at apns.url, trusting apns.caFile, signing with apns.keyFile
    ///     #expect(apns.log.entries(deviceToken: token).map(\.status) == [200])
    /// }
    /// ```
    public static func withServer<Result: Sendable>(
        configure: (inout FakeAPNsConfiguration) -> Void = { _ in },
        _ body: (FakeAPNsServer) async throws -> Result
    ) async throws -> Result {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("fakeapns-\(UUID().uuidString.prefix(8))")
        var configuration = FakeAPNsConfiguration(credentialsDirectory: directory)
        configuration.port = 0
        configuration.controlPort = 0
        configure(&configuration)
        // Removed once the server has closed, also when it could not start. A temporary folder of
        // credentials: one left behind is junk in /tmp, nothing more.
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await start(configuration: configuration, timeline: Timeline())
        do {
            let result = try await body(server)
            await server.close()
            return result
        } catch {
            await server.close()
            throw error
        }
    }
}
