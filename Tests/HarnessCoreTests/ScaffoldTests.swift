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
