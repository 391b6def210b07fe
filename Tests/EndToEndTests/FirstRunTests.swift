import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 33: a new user's first minutes, in folders outside the project, with the binary copied out of
/// the build folder alone (no resource bundle beside it): `harness init` and its two scenarios,
/// `harness doctor`, `harness serve` with no harness.yml.
@Suite struct FirstRunTests {
    /// The built harness, copied alone into a folder of its own.
    static func copiedHarness(_ name: String) throws -> String {
        let bin = try PackagePaths.temporaryDirectory(name + "-bin")
        let copy = bin.appendingPathComponent("harness")
        try FileManager.default.copyItem(atPath: HarnessCommand.path, toPath: copy.path)
        return copy.path
    }

    /// Runs the copied `harness` in `folder`.
    static func run(_ harness: String, _ arguments: [String], in folder: URL) async throws -> ChildProcess {
        try await ChildProcess.run(harness, arguments, currentDirectory: folder, timeout: .seconds(300))
    }

    @Test func anInitFolderPassesAndItsVariantFailsNamingTheBrokenLink() async throws {
        let folder = try PackagePaths.temporaryDirectory("first-run-init")
        let harness = try Self.copiedHarness("first-run-init")
        let made = try await Self.run(harness, ["init"], in: folder)
        #expect(made.status == 0, "\(made.transcript)")
        for file in ["harness.yml", "app.py", "media/daily/today.json", ".github/workflows/push-harness.yml"] {
            #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent(file).path), "\(file)")
        }
        let passed = try await Self.run(harness, ["run", "--ephemeral-ports"], in: folder)
        #expect(passed.status == 0, "\(passed.transcript)")
        #expect(passed.standardOutput.contains("PASS silent-push-download"), "\(passed.transcript)")

        let failed = try await Self.run(
            harness, ["run", "my-app-forgets-notification", "--ephemeral-ports"], in: folder)
        #expect(failed.status == 1, "\(failed.transcript)")
        #expect(
            failed.standardOutput.contains(
                "The chain broke at link 2: expected app.localNotification {alertBody: Today's stories are here}"),
            "\(failed.transcript)")

        // A download longer than the push's background time: the push completed early, the user told later.
        let slow = try await Self.run(harness, ["run", "slow-download", "--ephemeral-ports"], in: folder)
        #expect(slow.status == 0, "\(slow.transcript)")
        #expect(slow.standardOutput.contains("app.fetchCompleted {result: noData}"), "\(slow.transcript)")

        // The same push without Apple's background shape still wakes the app, with a warning.
        let harnessYMLText = try String(contentsOf: folder.appendingPathComponent("harness.yml"), encoding: .utf8)
        let plain = harnessYMLText.replacingOccurrences(
            of: "data: {content-available: 1, push_type: background, priority: 5}", with: "data: {content-available: 1}"
        )
        .replacingOccurrences(
            of: "        - apns.request.accepted: {pushType: background, priority: \"5\"}\n", with: "")
        #expect(plain != harnessYMLText)
        try plain.write(to: folder.appendingPathComponent("plain.yml"), atomically: true, encoding: .utf8)
        let warned = try await Self.run(
            harness, ["run", "silent-push-download", "-c", "plain.yml", "--ephemeral-ports"], in: folder)
        #expect(warned.status == 0, "\(warned.transcript)")
        #expect(
            warned.standardOutput.contains(
                "warning: a silent push (content-available: 1, no alert, badge or sound) sent as apns-push-type alert"),
            "\(warned.transcript)")
        #expect(!passed.standardOutput.contains("warning: a silent push"), "\(passed.transcript)")

        // Nothing is overwritten unless asked; asked, all is written again.
        let harnessYML = folder.appendingPathComponent("harness.yml")
        try "# mine\n".write(to: harnessYML, atomically: true, encoding: .utf8)
        let again = try await Self.run(harness, ["init"], in: folder)
        #expect(again.status == 2, "\(again.transcript)")
        #expect(again.standardError.contains("harness.yml, app.py"), "\(again.transcript)")
        #expect(try String(contentsOf: harnessYML, encoding: .utf8) == "# mine\n")
        let forced = try await Self.run(harness, ["init", "--force", "--name", "news"], in: folder)
        #expect(forced.status == 0, "\(forced.transcript)")
        #expect(try String(contentsOf: harnessYML, encoding: .utf8).contains("bundleId: com.example.news"))

        let wrong = try await Self.run(harness, ["init", "--language", "cobol"], in: folder)
        #expect(wrong.status == 2 && wrong.standardError.contains("--language takes python, shell, swift, not 'cobol'"))
    }

    /// The shell app, for people who want to see the wire: the same chain, the same variant.
    @Test func aShellInitFolderPassesAndItsVariantFails() async throws {
        let folder = try PackagePaths.temporaryDirectory("first-run-shell")
        let harness = try Self.copiedHarness("first-run-shell")
        let made = try await Self.run(harness, ["init", "--language", "shell"], in: folder)
        #expect(made.status == 0 && made.standardOutput.contains("wrote app.sh"), "\(made.transcript)")
        let passed = try await Self.run(harness, ["run", "--ephemeral-ports"], in: folder)
        #expect(passed.status == 0, "\(passed.transcript)")
        let failed = try await Self.run(
            harness, ["run", "my-app-forgets-notification", "--ephemeral-ports"], in: folder)
        #expect(failed.status == 1, "\(failed.transcript)")
        #expect(
            failed.standardOutput.contains("The chain broke at link 2: expected app.localNotification"),
            "\(failed.transcript)")
    }

    /// A Swift app on DeviceClient: the package `init --language swift` writes names this checkout (the
    /// one the harness was built from), `harness run` builds it and passes, and its variant fails.
    @Test func aSwiftInitFolderBuildsItsPackageOnDeviceClientAndPasses() async throws {
        let folder = try PackagePaths.temporaryDirectory("first-run-swift")
        let harness = try Self.copiedHarness("first-run-swift")
        let made = try await Self.run(harness, ["init", "--language", "swift", "--name", "news"], in: folder)
        #expect(made.status == 0 && made.standardOutput.contains("wrote Sources/news/App.swift"), "\(made.transcript)")
        let manifest = try String(contentsOf: folder.appendingPathComponent("Package.swift"), encoding: .utf8)
        #expect(manifest.contains(".package(path: \"\(PackagePaths.root.standardizedFileURL.path)\")"), "\(manifest)")

        let passed = try await Self.run(harness, ["run", "--ephemeral-ports"], in: folder)
        #expect(passed.status == 0, "\(passed.transcript)")
        #expect(passed.standardOutput.contains("building news: swift build --product news"), "\(passed.transcript)")
        #expect(passed.standardOutput.contains("PASS silent-push-download"), "\(passed.transcript)")
        #expect(
            FileManager.default.fileExists(atPath: folder.appendingPathComponent(".build/debug/news").path),
            "\(passed.transcript)")

        let failed = try await Self.run(harness, ["run", "news-forgets-notification", "--ephemeral-ports"], in: folder)
        #expect(failed.status == 1, "\(failed.transcript)")
        #expect(
            failed.standardOutput.contains("The chain broke at link 2: expected app.localNotification"),
            "\(failed.transcript)")

        // A folder that is not PushHarness is refused, naming it; nothing is written over.
        let elsewhere = try PackagePaths.temporaryDirectory("first-run-swift-elsewhere")
        let refused = try await Self.run(
            harness, ["init", "--language", "swift", "--harness-package", folder.path], in: elsewhere)
        #expect(refused.status == 2, "\(refused.transcript)")
        #expect(refused.standardError.contains("\(folder.path): not a PushHarness checkout"), "\(refused.transcript)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path).isEmpty)
        let python = try await Self.run(harness, ["init", "--harness-package", folder.path], in: elsewhere)
        #expect(python.status == 2 && python.standardError.contains("--harness-package is for --language swift only"))
    }

    @Test func doctorSaysWhatIsMissingAndHowToFixIt() async throws {
        let folder = try PackagePaths.temporaryDirectory("first-run-doctor")
        let harness = try Self.copiedHarness("first-run-doctor")
        let empty = try await Self.run(harness, ["doctor"], in: folder)
        #expect(empty.status == 0, "\(empty.transcript)")
        #expect(empty.standardOutput.contains("libnghttp2"), "\(empty.transcript)")
        #expect(empty.standardOutput.contains("all is well"), "\(empty.transcript)")

        // A port held by another process, and an app whose program is nowhere.
        let holder = try RunningChild(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import signal,socket\ns=socket.socket()\ns.bind(('127.0.0.1',0))\ns.listen()\n"
                    + "print('listening on', s.getsockname()[1], flush=True)\nsignal.pause()",
            ])
        let printed = try #require(await holder.waitForLine(containing: "listening on", timeout: .seconds(30)))
        let port = try #require(printed.split(separator: " ").last.flatMap { Int($0) })
        try """
        version: 1
        services:
          media: {port: \(port)}
        apps:
          gone:
            bundleId: com.example.gone
            command: [no-such-program-here]
            backgroundModes: []
        scenarios: {}
        """.write(to: folder.appendingPathComponent("harness.yml"), atomically: true, encoding: .utf8)
        let sick = try await Self.run(harness, ["doctor"], in: folder)
        holder.send(SIGKILL)
        _ = await holder.waitForExit()
        #expect(sick.status == 1, "\(sick.transcript)")
        #expect(
            sick.standardOutput.contains("✗ port \(port) (services.media.port) is in use"), "\(sick.transcript)")
        #expect(sick.standardOutput.contains("set services.media.port: 0"), "\(sick.transcript)")
        #expect(
            sick.standardOutput.contains("✗ the app 'gone' runs no-such-program-here, which is not found"),
            "\(sick.transcript)")
        #expect(sick.standardOutput.contains("2 problems to fix"), "\(sick.transcript)")
    }

    @Test func serveRunsWithoutAHarnessYMLAndSaysSo() async throws {
        let folder = try PackagePaths.temporaryDirectory("first-run-serve")
        let harness = try Self.copiedHarness("first-run-serve")
        let serve = try RunningChild(
            harness, ["serve", "--ephemeral-ports", "--endpoints", "ep.json"], currentDirectory: folder)
        let up = await serve.waitForLine(containing: "services are up")
        let endpoints = try JSONSerialization.jsonObject(
            with: Data(contentsOf: folder.appendingPathComponent("ep.json")))
        let parse = try #require(((endpoints as? [String: [String: Any]])?["parse"]?["url"]) as? String)
        let dashboard = try await CurlExchange.run([parse.replacingOccurrences(of: "/parse", with: "") + "/dashboard"])
        serve.send(SIGTERM)
        let status = await serve.waitForExit()
        #expect(up != nil && status == 0, "\(serve.output)")
        #expect(dashboard.status == 200, "\(dashboard)")
        #expect(serve.output.contains("no harness.yml in"), "\(serve.output)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent(".harness/media").path))

        let missing = try await Self.run(harness, ["run", "-c", "nowhere.yml"], in: folder)
        #expect(missing.status == 2, "\(missing.transcript)")
        #expect(
            missing.standardError.contains("nowhere.yml: there is no such file; 'harness init' writes a first one"),
            "\(missing.transcript)")
        #expect(!missing.standardError.contains("could not be completed"), "\(missing.transcript)")
    }
}
