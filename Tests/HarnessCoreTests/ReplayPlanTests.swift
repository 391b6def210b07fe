import Foundation
import HarnessCore
import Recording
import Testing

/// What `harness replay DIR` runs, decided from the cassette and the command line: a row per rule.
@Suite struct ReplayPlanTests {
    static let recipe = CassetteMeta.Run(
        scenario: "resume", network: "3G", config: "other.yml", baseDirectory: "/ci/project",
        apps: ["nasa-tv=nasa-tv-python"], ephemeralPorts: true)

    static func command(
        config: String? = nil, apps: [String] = [], network: String? = nil, ephemeralPorts: Bool = false
    ) -> ReplayPlan.Command {
        ReplayPlan.Command(
            config: config, apps: apps, network: network, ephemeralPorts: ephemeralPorts, skipBuild: false,
            currentDirectory: "/laptop/here")
    }

    @Test func aloneItReplaysWhatWasRecorded() {
        let plan = ReplayPlan.decide(scenario: "resume[3G]", recipe: Self.recipe, command: Self.command()) { _ in true }
        #expect(plan.configuration == .recorded)
        #expect(plan.scenario == "resume" && plan.network == "3G")
        #expect(plan.apps == ["nasa-tv=nasa-tv-python"] && plan.ephemeralPorts)
        #expect(plan.baseDirectory == "/ci/project")
        #expect(plan.overrides.isEmpty && plan.notes.isEmpty)
    }

    @Test func eachOverrideIsSaid() {
        let plan = ReplayPlan.decide(
            scenario: "resume[3G]", recipe: Self.recipe,
            command: Self.command(config: "mine/harness.yml", apps: ["nasa-tv=buggy"], network: "LTE")
        ) { _ in true }
        #expect(plan.configuration == .file("mine/harness.yml"))
        #expect(plan.baseDirectory == "/laptop/here/mine")
        #expect(plan.apps == ["nasa-tv=buggy"] && plan.network == "LTE")
        #expect(
            plan.overrides == [
                "-c mine/harness.yml: the scenario as that file has it now, not the recorded copy",
                "--app nasa-tv=buggy in place of nasa-tv=nasa-tv-python",
                "--network LTE in place of 3G",
            ])
    }

    @Test func theAppsAreBuiltUnlessThisReplaySkipsItAndTheRecordingsSkipIsSaid() {
        var skipped = Self.recipe
        skipped.skipBuild = true
        let plan = ReplayPlan.decide(scenario: "resume[3G]", recipe: skipped, command: Self.command()) { _ in true }
        #expect(!plan.skipBuild)
        #expect(
            plan.notes == ["the recording skipped the apps' build commands; this replay runs them (--skip-build skips)"]
        )
        var command = Self.command()
        command.skipBuild = true
        #expect(ReplayPlan.decide(scenario: "r", recipe: Self.recipe, command: command) { _ in true }.skipBuild)
    }

    @Test func aCassetteWithoutItsCopyReadsTheFileInTheRecordedFolder() {
        let plan = ReplayPlan.decide(
            scenario: "resume[3G]", recipe: Self.recipe, keepsConfiguration: false, command: Self.command()
        ) { _ in true }
        #expect(plan.configuration == .file("/ci/project/other.yml"))
        #expect(plan.notes == ["the cassette keeps no copy of harness.yml; /ci/project/other.yml is read as it is now"])
    }

    @Test func aNetworkOfNoneOverridesARunOutsideAMatrix() {
        var plain = Self.recipe
        plain.network = nil
        let plan = ReplayPlan.decide(scenario: "resume", recipe: plain, command: Self.command(network: "none")) { _ in
            true
        }
        #expect(plan.network == "none")
        #expect(plan.overrides == ["--network none in place of the scenario's own network"])
    }

    @Test func theRecordedFolderMissingMeansTheCurrentOneSaySo() {
        let plan = ReplayPlan.decide(scenario: "resume[3G]", recipe: Self.recipe, command: Self.command()) { _ in false
        }
        #expect(plan.baseDirectory == "/laptop/here")
        #expect(
            plan.notes == [
                "the folder the recording ran in (/ci/project) is not here: app commands and files are looked for in "
                    + "/laptop/here"
            ])
    }

    @Test func anOlderCassetteNamesItsCellInTheScenario() {
        let plan = ReplayPlan.decide(scenario: "resume[3G]", recipe: nil, command: Self.command()) { _ in true }
        #expect(plan.configuration == .file("harness.yml") && plan.baseDirectory == "/laptop/here")
        #expect(plan.scenario == "resume" && plan.network == "3G")
        let plain = ReplayPlan.decide(scenario: "a[b", recipe: nil, command: Self.command()) { _ in true }
        #expect(plain.scenario == "a[b" && plain.network == nil)
    }
}
