import Foundation
import HarnessCore
import Testing

/// What `harness init` writes, and what it refuses: a test per rule.
struct ScaffoldTests {
    @Test func aPythonScaffoldHasTheFileItsAppRunsAndItsScenarioChecks() throws {
        let scaffold = try Scaffold(language: .python, name: "news")
        #expect(
            scaffold.files.map(\.path) == [
                "harness.yml", "app.py", "media/daily/today.json", ".github/workflows/push-harness.yml",
            ])
        let yml = String(decoding: scaffold.files[0].contents, as: UTF8.self)
        #expect(yml.contains("command: [python3, app.py]"))
        #expect(yml.contains("sha256OfFixture: daily/today.json"))
        #expect(yml.contains("news-forgets-notification:"))
        #expect(scaffold.files[1].executable)
        // The harness.yml reads as harness.yml, with both scenarios.
        let configuration = try ConfigurationLoader.parse(
            yml, file: "harness.yml", baseDirectory: URL(fileURLWithPath: "/tmp"))
        #expect(
            configuration.scenarios.map(\.name) == [
                "silent-push-download", "slow-download", "news-forgets-notification",
            ])
    }

    @Test func aShellScaffoldRunsItsAppWithBashAndKeepsToThePlainFlow() throws {
        let scaffold = try Scaffold(language: .shell, name: "news")
        #expect(scaffold.files.map(\.path).contains("app.sh"))
        let yml = String(decoding: scaffold.files[0].contents, as: UTF8.self)
        #expect(yml.contains("command: [bash, app.sh]"))
        let configuration = try ConfigurationLoader.parse(
            yml, file: "harness.yml", baseDirectory: URL(fileURLWithPath: "/tmp"))
        #expect(configuration.scenarios.map(\.name) == ["silent-push-download", "news-forgets-notification"])
    }

    @Test func aShellScaffoldsWorkflowInstallsWhatItsAppRuns() throws {
        let shell = try Scaffold(language: .shell, name: "news")
        let workflow = try #require(shell.files.first { $0.path == ".github/workflows/push-harness.yml" })
        #expect(
            String(decoding: workflow.contents, as: UTF8.self).contains(
                "apt-get install -y libnghttp2-14 libsqlite3-0 socat curl"))
    }

    @Test func aSwiftScaffoldIsAPackageOnDeviceClientThatHarnessYMLBuildsAndRuns() throws {
        let scaffold = try Scaffold(language: .swift, name: "news", harnessPackage: .path("/src/push-harness"))
        #expect(
            scaffold.files.map(\.path) == [
                "harness.yml", "Package.swift", "Sources/news/App.swift", "media/daily/today.json",
                ".github/workflows/push-harness.yml",
            ])
        let manifest = String(decoding: scaffold.files[1].contents, as: UTF8.self)
        #expect(manifest.contains(".package(path: \"/src/push-harness\")"))
        #expect(manifest.contains(".product(name: \"DeviceClient\", package: \"push-harness\")"))
        #expect(manifest.contains("name: \"news\""))
        #expect(String(decoding: scaffold.files[2].contents, as: UTF8.self).contains("import DeviceClient"))
        let yml = String(decoding: scaffold.files[0].contents, as: UTF8.self)
        let configuration = try ConfigurationLoader.parse(
            yml, file: "harness.yml", baseDirectory: URL(fileURLWithPath: "/tmp"))
        #expect(configuration.scenarios.map(\.name) == ["silent-push-download", "news-forgets-notification"])
        // Both apps are built before they run, and run the package's executable.
        for name in ["news", "news-broken"] {
            let app = try #require(configuration.apps[name])
            #expect(app.build == ["swift", "build", "--product", "news"])
            #expect(app.command.first == ".build/debug/news")
        }
        #expect(configuration.apps["news-broken"]?.command == [".build/debug/news", "--forget-notification"])
        let workflow = String(decoding: scaffold.files[4].contents, as: UTF8.self)
        #expect(workflow.contains("swift-actions/setup-swift"))
    }

    @Test func aSwiftScaffoldNeedsToKnowWherePushHarnessIs() {
        #expect(throws: ScaffoldError.self) { try Scaffold(language: .swift, name: "news") }
    }

    @Test func theHarnessPackageIsAFolderOrARepositoryWithSwiftPMsIdentity() throws {
        let here = URL(fileURLWithPath: "/home/me/app")
        let folder = try Scaffold.HarnessPackage(argument: "../PushHarness", relativeTo: here)
        #expect(folder == .path("/home/me/PushHarness"))
        #expect(folder.identity == "pushharness")
        let https = try Scaffold.HarnessPackage(argument: "https://example.com/team/push-harness.git", relativeTo: here)
        #expect(https == .url("https://example.com/team/push-harness.git"))
        #expect(https.identity == "push-harness")
        #expect(https.manifestLine == ".package(url: \"https://example.com/team/push-harness.git\", branch: \"main\")")
        let ssh = try Scaffold.HarnessPackage(argument: "git@example.com:team/PushHarness.git", relativeTo: here)
        #expect(ssh.identity == "pushharness")
        // Quotes and backslashes stay inside the Swift string literal.
        #expect(Scaffold.HarnessPackage.path("/a\"b\\c").manifestLine == #".package(path: "/a\"b\\c")"#)
        for bad in ["", "/tmp/a\nb", String(repeating: "a", count: 4097)] {
            #expect(throws: ScaffoldError.self) { try Scaffold.HarnessPackage(argument: bad, relativeTo: here) }
        }
    }

    @Test func aNameThatCannotBeAnAppNameIsRefused() {
        for name in ["", "1st", "my app", "naïve", String(repeating: "a", count: 41)] {
            #expect(throws: ScaffoldError.self) { try Scaffold(language: .python, name: name) }
        }
    }

    @Test func theFilesThereAlreadyAreNamed() throws {
        let scaffold = try Scaffold(language: .python, name: "news")
        #expect(scaffold.existing { $0 == "app.py" || $0 == "notes.txt" } == ["app.py"])
    }
}
