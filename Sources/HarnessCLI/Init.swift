import ArgumentParser
import Foundation
import HarnessCore

struct Init: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Write a first harness.yml, an app speaking the device protocol, a file to download and a CI workflow.",
        discussion: """
            In the current folder: harness.yml (a silent push → background download → local notification \
            scenario and a variant that must fail), the app, media/daily/today.json and \
            .github/workflows/push-harness.yml. 'harness run' then passes. Existing files are left alone \
            unless --force (exit 2 naming them).
            """)

    @Option(help: "The app's language: \(Scaffold.Language.allCases.map(\.rawValue).joined(separator: ", ")).")
    var language = Scaffold.Language.python.rawValue

    @Option(help: "The app's name in harness.yml (and the end of its bundle id).")
    var name = "my-app"

    @Option(
        help: ArgumentHelp(
            "With --language swift: PushHarness's folder or git URL, for the app's Package.swift.",
            discussion: "By default the checkout this harness was built from, while it is still there."))
    var harnessPackage: String?

    @Flag(help: "Overwrite files that are there already.")
    var force = false

    func run() async throws {
        guard let chosen = Scaffold.Language(rawValue: language.lowercased()) else {
            let known = Scaffold.Language.allCases.map(\.rawValue).joined(separator: ", ")
            fail("--language takes \(known), not '\(language.prefix(40))'", code: 2)
        }
        let here = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        let scaffold: Scaffold
        let harness: Scaffold.HarnessPackage?
        do {
            harness = try package(in: here, for: chosen)
            scaffold = try Scaffold(language: chosen, name: name, harnessPackage: harness)
        } catch {
            fail(error.description, code: 2)
        }
        let there = scaffold.existing { FileManager.default.fileExists(atPath: here.appendingPathComponent($0).path) }
        if !there.isEmpty, !force {
            fail(
                "\(there.joined(separator: ", ")) \(there.count == 1 ? "is" : "are") there already in \(here.path): "
                    + "nothing was written (--force overwrites)", code: 2)
        }
        for file in scaffold.files {
            let url = here.appendingPathComponent(file.path)
            do {
                try FileManager.default.createDirectory(
                    at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try file.contents.write(to: url, options: .atomic)
                if file.executable {
                    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path)
                }
            } catch {
                fail("\(url.path): cannot be written: \(FileProblem.describe(error))", code: 2)
            }
            say("wrote \(file.path)")
        }
        say(
            """

            Next:
              harness run                                   # the scenario: exit 0, with its timeline
              harness run \(name)-forgets-notification      # the variant that must fail: exit 1, naming the broken link
            Then make harness.yml's app '\(name)' run your own app (docs/writing-an-app.md).
            """)
        switch chosen {
        case .shell: say("app.sh needs bash, socat (apt-get install socat) and curl.")
        case .swift:
            say(
                "harness run builds the app with swift build first (a minute the first time); Package.swift names "
                    + "PushHarness as \(harness?.manifestLine ?? "")")
        case .python: break
        }
    }

    /// Where a Swift app finds PushHarness: `--harness-package`, checked when it is a folder, or the
    /// checkout this harness was built from.
    private func package(
        in here: URL, for language: Scaffold.Language
    ) throws(ScaffoldError) -> Scaffold.HarnessPackage? {
        guard language == .swift else {
            guard harnessPackage == nil else { throw .harnessPackageWithoutSwift }
            return nil
        }
        guard let harnessPackage else { return HarnessCheckout.builtFrom().map { .path($0.path) } }
        let package = try Scaffold.HarnessPackage(argument: harnessPackage, relativeTo: here)
        if case .path(let path) = package, !HarnessCheckout.isCheckout(URL(fileURLWithPath: path)) {
            throw .notACheckout(path: path)
        }
        return package
    }
}
