import ArgumentParser
import HarnessCore

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the scenarios in the scenario file.")

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        let configuration = try loadConfiguration(options.config)
        let width = configuration.scenarios.map(\.name.count).max() ?? 0
        for scenario in configuration.scenarios {
            say(scenario.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + scenario.description)
        }
    }
}
