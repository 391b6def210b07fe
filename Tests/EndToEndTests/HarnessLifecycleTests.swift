import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What a user sees around a run: Ctrl-C, ports taken, apps that do not start, and `harness serve`
/// driven by curl and a provider token from Python.
@Suite struct HarnessLifecycleTests {
    var harness: String { PackagePaths.binaries.appendingPathComponent("harness").path }

    func requireBinaries() throws {
        try #require(FileManager.default.isExecutableFile(atPath: harness), "build first: swift build (ci/test does)")
    }

    /// A scenario file like the catalogue's, with every port free but those of `ports` (by key, such as
    /// `apns.controlPort`) and the given app command.
    func configuration(app command: String, ports: [String: Int] = [:], throttle: String = "100KB/s") throws -> URL {
        let media = PackagePaths.root.appendingPathComponent("Fixtures/media").path
        let text = """
            version: 1
            services:
              apns: {port: \(ports["apns.port"] ?? 0), controlPort: \(ports["apns.controlPort"] ?? 0)}
              media:
                port: \(ports["media.port"] ?? 0)
                controlPort: \(ports["media.controlPort"] ?? 0)
                root: \(media)
                throttle: \(throttle)
              parse: {port: \(ports["parse.port"] ?? 0)}
              device: {suspendAfterBackground: 200ms}
            apps:
              nasa-tv:
                bundleId: com.razeware.NASA-TV
                command: \(command)
                backgroundModes: [remote-notification]
            scenarios:
              photo:
                steps:
            \(ScenarioFixtures.silentPushSteps(indent: 6))
                expect:
                  chain: [transfer.completed, app.fetchCompleted]
            """
        let file = try PackagePaths.temporaryDirectory().appendingPathComponent("harness.yml")
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    var nasaTV: String { "[\(PackagePaths.binaries.appendingPathComponent("nasa-tv").path)]" }

    @Test func ctrlCStopsTheAppAndTheServicesAndStillWritesTheReport() async throws {
        try requireBinaries()
        // The media server's port is one below the ephemeral range, where no other test's free port
        // or outgoing connection can take it once the harness has let it go.
        let chosen = try #require(
            (0..<200).lazy.map { _ in Int.random(in: 12_000...20_000) }.first { (try? isFree(port: $0)) == true })
        let file = try configuration(app: nasaTV, ports: ["media.port": chosen], throttle: "20KB/s")
        let reports = file.deletingLastPathComponent().appendingPathComponent("report")
        let run = try RunningChild(harness, ["run", "photo", "--config", file.path, "--report-dir", reports.path])
        let launched = try #require(await run.waitForLine(containing: "device.app.launched"), "\(run.output)")
        let pid = try #require(
            launched.split(separator: " ").first { $0.hasPrefix("pid=") }.flatMap { Int32($0.dropFirst(4)) })
        let media = try #require(await run.waitForLine(containing: "service=media"))
        _ = try #require(await run.waitForLine(containing: "transfer.progress"), "\(run.output)")
        run.send(SIGINT)
        let status = await run.waitForExit()
        #expect(status == 130, "\(run.output)")
        #expect(run.output.contains("INTERRUPTED photo"))
        #expect(kill(pid, 0) == -1 && errno == ESRCH, "the app process \(pid) is still alive")
        let port = try #require(media.split(separator: ":").last.flatMap { Int($0.prefix { $0.isNumber }) })
        #expect(port == chosen)
        #expect(try isFree(port: port), "port \(port) is still taken")
        let junit = try String(contentsOf: reports.appendingPathComponent("junit.xml"), encoding: .utf8)
        #expect(junit.contains(#"<error message="interrupted">"#))
        #expect(FileManager.default.fileExists(atPath: reports.appendingPathComponent("timeline.jsonl").path))
    }

    /// Every listener, those bound before the services run and those bound as they start running.
    @Test(arguments: ["apns.port", "apns.controlPort", "media.port", "media.controlPort", "parse.port"])
    func aPortInUseNamesThePortAndTheSetting(key: String) async throws {
        try requireBinaries()
        let (socket, port) = try listeningSocket()
        defer { close(socket) }
        let file = try configuration(app: nasaTV, ports: [key: port])
        let result = try await ChildProcess.run(harness, ["run", "photo", "--config", file.path])
        #expect(result.status == 2, "\(result.transcript)")
        // The process holding it, this test's, is named: Linux tells a process's own sockets.
        #expect(
            result.standardError.contains("port \(port) is already in use (by process \(getpid()), "),
            "\(result.transcript)")
        #expect(result.standardError.contains("; choose another with services.\(key)"), "\(result.transcript)")
    }

    @Test func anAppThatExitsDuringLaunchIsReportedWithItsLastOutput() async throws {
        try requireBinaries()
        let file = try configuration(
            app: #"[sh, -c, "echo loading settings; echo settings.plist is missing >&2; exit 3"]"#)
        let result = try await ChildProcess.run(harness, ["run", "photo", "--config", file.path])
        #expect(result.status == 1, "\(result.transcript)")
        #expect(result.standardOutput.contains("exited during launch (exited with status 3)"), "\(result.transcript)")
        #expect(result.standardOutput.contains("settings.plist is missing"))
    }

    @Test func anAppCommandThatCannotStartIsReportedAsSuch() async throws {
        try requireBinaries()
        let file = try configuration(app: "[/nonexistent/nasa-tv]")
        let result = try await ChildProcess.run(harness, ["run", "photo", "--config", file.path])
        #expect(result.status == 1, "\(result.transcript)")
        #expect(
            result.standardOutput.contains("the app command '/nonexistent/nasa-tv' cannot start"),
            "\(result.transcript)")
    }

    @Test func serveWritesEndpointsThatCurlCanPushThrough() async throws {
        try requireBinaries()
        let directory = try PackagePaths.temporaryDirectory()
        let endpointsFile = directory.appendingPathComponent("endpoints.json")
        let serve = try RunningChild(
            harness,
            [
                "serve", "--ephemeral-ports", "--endpoints", endpointsFile.path, "--state-dir",
                directory.appendingPathComponent("state").path,
            ], currentDirectory: PackagePaths.root)
        _ = try #require(await serve.waitForLine(containing: "services are up"), "\(serve.output)")
        let endpoints = try #require(
            JSONSerialization.jsonObject(with: Data(contentsOf: endpointsFile)) as? [String: [String: String]])
        let apns = try #require(endpoints["apns"])
        #expect(endpoints["parse"]?["masterKey"] == "nasa-tv-master-key")
        #expect(endpoints["media"]?["controlURL"]?.hasPrefix("http://127.0.0.1:") == true)

        let registered = try await ChildProcess.run(
            "curl",
            [
                "--silent", "--show-error", "-X", "POST", "--data",
                #"{"topic":"\#(apns["topic"]!)","environment":"sandbox"}"#, apns["controlURL"]! + "/devices",
            ])
        let token = try #require(
            (try JSONSerialization.jsonObject(with: Data(registered.standardOutput.utf8)) as? [String: Any])?[
                "deviceToken"] as? String, "\(registered.transcript)")
        let jwt = try await PythonProviderToken.sign(
            keyFile: apns["keyFile"]!, keyId: apns["keyId"]!, teamId: apns["teamId"]!)
        let push = try await ChildProcess.run(
            "curl",
            [
                "--silent", "--show-error", "--http2", "--cacert", apns["caFile"]!, "--dump-header", "-",
                "-H", "authorization: bearer \(jwt)",
                "-H", "apns-topic: \(apns["topic"]!)", "-H", "apns-push-type: background", "-H", "apns-priority: 5",
                "--data", #"{"aps":{"content-available":1}}"#, apns["url"]! + "/3/device/" + token,
            ])
        serve.send(SIGTERM)
        let status = await serve.waitForExit()
        #expect(push.standardOutput.hasPrefix("HTTP/2 200"), "\(push.transcript)")
        #expect(push.standardOutput.lowercased().contains("apns-id: "))
        #expect(status == 0, "\(serve.output)")
        #expect(serve.output.contains("services stopped"))
    }

    /// A loopback TCP socket listening on a free port, to take that port away from the harness.
    func listeningSocket() throws -> (Int32, Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        try #require(bound, "could not bind a loopback socket")
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    func isFree(port: Int) throws -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var reuse: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
