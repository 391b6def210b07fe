import ArgumentParser
import FakeAPNs
import FakeParse
import Foundation
import HarnessCore
import Processes

#if canImport(Glibc)
import Glibc
#endif

struct Doctor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check that this machine has what harness.yml's runs need, and say how to fix what it lacks.",
        discussion: """
            The libraries the harness loaded (libnghttp2, SQLite), harness.yml's fixed ports free, the \
            programs its apps and backends run found, .harness writable. Without a harness.yml, the \
            defaults. Exit 0 when all is well, 1 with one fix per problem, 2 when harness.yml cannot be read.
            """)

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        let here = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        let configuration: HarnessConfiguration
        let base: URL
        if options.config == nil, !FileManager.default.fileExists(atPath: options.path) {
            say("no harness.yml in \(here.path): checking the defaults ('harness init' writes a harness.yml)")
            configuration = try ConfigurationLoader.parse("version: 1\n", file: "(defaults)", baseDirectory: here)
            base = here
        } else {
            configuration = try loadConfiguration(options.path)
            base = URL(fileURLWithPath: options.path, relativeTo: here).deletingLastPathComponent().standardizedFileURL
        }
        var checkup = Checkup()
        checkup.library(
            "libnghttp2", version: .success(NGHTTP2Library.version), install: "apt-get install libnghttp2-14")
        checkup.library(
            "SQLite", version: Result { try SQLiteLibrary.version() }, install: "apt-get install libsqlite3-0")
        // Bound as the services bind: a port a finished run left in TIME_WAIT is free for them.
        checkup.ports(
            Checkup.fixedPorts(of: configuration), free: { FreePorts.bindable($0, reusingAddress: true) },
            holder: PortHolder.of(port:))
        var programs: [(whose: String, program: String)] = []
        for app in configuration.apps.values.sorted(by: { $0.name < $1.name }) {
            if let program = (app.build ?? app.command).first { programs.append(("the app '\(app.name)'", program)) }
        }
        for backend in configuration.backends {
            if let program = backend.command.first { programs.append(("the backend '\(backend.name)'", program)) }
        }
        if let program = configuration.services.apns.deliveryCommand?.first {
            programs.append(("services.apns.deliveryCommand", program))
        }
        checkup.programs(programs) {
            FileManager.default.isExecutableFile(atPath: AppProcess.resolve($0, in: base).path)
        }
        var files: [(whose: String, path: String)] = []
        for app in configuration.apps.values.sorted(by: { $0.name < $1.name }) {
            files += Checkup.scriptArguments(of: app.command).map { ("the app '\(app.name)'", $0) }
        }
        for backend in configuration.backends {
            files += Checkup.scriptArguments(of: backend.command).map { ("the backend '\(backend.name)'", $0) }
        }
        checkup.files(files) { FileManager.default.fileExists(atPath: URL(fileURLWithPath: $0, relativeTo: base).path) }
        let state = base.appendingPathComponent(".harness")
        checkup.stateFolder(state.path, problem: Self.writeProblem(in: state))
        for finding in checkup.findings {
            say(finding.passed ? "✓ \(finding.what)" : "✗ \(finding.what)\n    fix: \(finding.fix ?? "")")
        }
        let problems = checkup.findings.filter { !$0.passed }.count
        say(problems == 0 ? "\nall is well" : "\n\(problems) problem\(problems == 1 ? "" : "s") to fix")
        throw ExitCode(checkup.healthy ? 0 : 1)
    }

    /// Why a file cannot be written in `folder` (made if missing); nil when it can.
    static func writeProblem(in folder: URL) -> String? {
        let probe = folder.appendingPathComponent(".doctor-\(getpid())")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data("ok".utf8).write(to: probe)
            try FileManager.default.removeItem(at: probe)
            return nil
        } catch {
            return FileProblem.describe(error)
        }
    }
}
