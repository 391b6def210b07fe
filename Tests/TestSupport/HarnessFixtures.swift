import Foundation

/// The built `harness` command, run from the package root as a user runs it.
public enum HarnessCommand {
    public static var path: String { PackagePaths.binaries.appendingPathComponent("harness").path }

    /// Runs `harness` with `arguments`; fails with a hint when it has not been built.
    ///
    /// At most `HARNESS_TEST_RUNS` (default 6) run at once: the suites hold some ninety scenario runs,
    /// each with its services and app processes, and started all together on two cores they starve
    /// each other's timers (a 2 s expiry, a post-boot delay) until the scenarios' own timing breaks.
    ///
    /// - Parameter folder: where it runs; the package root unless a test says otherwise.
    public static func run(_ arguments: [String], in folder: URL = PackagePaths.root) async throws -> ChildProcess {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw NotBuilt(path: path)
        }
        await slots.acquire()
        defer { Task { await slots.release() } }
        return try await ChildProcess.run(path, arguments, currentDirectory: folder)
    }

    static let slots = RunSlots(
        Int(ProcessInfo.processInfo.environment["HARNESS_TEST_RUNS"] ?? "").flatMap { $0 > 0 ? $0 : nil } ?? 6)

    /// Runs a catalogue scenario on free ports, without building the apps, with its report in a new
    /// folder; `arguments` go to `harness run` as well.
    public static func runCatalogueScenario(_ scenario: String, _ arguments: [String] = []) async throws -> (
        ChildProcess, reports: URL
    ) {
        let reports = try PackagePaths.temporaryDirectory(scenario)
        let result = try await run(
            ["run", scenario, "--ephemeral-ports", "--skip-build", "--report-dir", reports.path] + arguments)
        return (result, reports)
    }

    public struct NotBuilt: Error, CustomStringConvertible {
        var path: String
        public var description: String { "build first: swift build (ci/test does); there is no \(path)" }
    }
}

/// Pieces of scenario files and media roots that several tests share.
public enum ScenarioFixtures {
    /// The steps that bring the reference app to suspended and send it a silent push, as YAML list
    /// items indented by `indent` spaces.
    public static func silentPushSteps(app: String = "nasa-tv", indent: Int) -> String {
        let steps = [
            "- launch: \(app)",
            "- waitFor: {event: parse.installation.saved, timeout: 30s}",
            "- home: \(app)",
            "- waitFor: {event: device.app.state, where: {state: suspended}, timeout: 10s}",
            "- push: {where: {deviceType: ios}, data: {content-available: 1, push_type: background, priority: 5}}",
        ]
        let margin = String(repeating: " ", count: indent)
        return steps.map { margin + $0 }.joined(separator: "\n")
    }

    /// The reference app's binary and the catalogue's media folder, for scenario files written by tests.
    public static var nasaTV: String { PackagePaths.binaries.appendingPathComponent("nasa-tv").path }
    public static var media: String { PackagePaths.root.appendingPathComponent("Fixtures/media").path }

    /// The start of a scenario file: every service on a free port, the catalogue's media (`media` adds
    /// settings such as `throttle: 200KB/s`), the device's settings, and the reference app as `app`,
    /// run with `arguments`. Scenarios follow under `scenarios:`.
    public static func header(media: String, device: String, app: String = "nasa-tv", arguments: [String] = [])
        -> String
    {
        let command = ([nasaTV] + arguments).joined(separator: ", ")
        return """
            version: 1
            services:
              apns: {port: 0}
              media: {port: 0, root: \(Self.media), \(media)}
              parse: {port: 0}
              device: {\(device)}
            apps:
              \(app):
                bundleId: com.razeware.NASA-TV
                command: [\(command)]
                backgroundModes: [remote-notification]

            """
    }

    /// The reference app built with a bug (it never completes a background fetch), as an entry of
    /// `apps:` named `buggy`, to follow ``header(media:device:app:arguments:)``.
    public static var buggyApp: String {
        """
          buggy:
            bundleId: com.razeware.NASA-TV
            command: [\(nasaTV), --bug, never-calls-completion-handler]
            backgroundModes: [remote-notification]

        """
    }

    /// A scenario under `scenarios:` named `name`: the silent push to `app`, and the whole chain
    /// expected `within`.
    public static func photoScenario(_ name: String, app: String = "nasa-tv", within: String = "60s") -> String {
        """
          \(name):
            steps:
        \(silentPushSteps(app: app, indent: 6))
            expect:
              within: \(within)
              chain: [device.push.delivered, transfer.completed, app.fetchCompleted]

        """
    }

    /// Writes `text` as `harness.yml` in a new folder and returns the file.
    public static func writeConfiguration(_ text: String, _ name: String = #function) throws -> URL {
        let file = try PackagePaths.temporaryDirectory(name).appendingPathComponent("harness.yml")
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    /// A new media root holding `photo` at `photos/dailyphoto.jpg`.
    public static func mediaRoot(photo: [UInt8], _ name: String = #function) throws -> URL {
        let root = try PackagePaths.temporaryDirectory(name)
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("photos"), withIntermediateDirectories: true)
        try Data(photo).write(to: root.appendingPathComponent("photos/dailyphoto.jpg"))
        return root
    }
}

/// A counting semaphore for async code: callers past the limit wait, first come first served.
actor RunSlots {
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ count: Int) { free = count }

    func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty {
            free += 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
