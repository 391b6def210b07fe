import ArgumentParser
import HarnessCore
import HarnessTimeline

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the scenarios in the scenario file, or every event kind (--events).")

    @OptionGroup var options: ConfigOptions

    @Flag(help: "List every event kind with its attributes instead, as Markdown (docs/event-kinds.md).")
    var events = false

    func run() async throws {
        if events {
            print(EventCatalogue.markdown(), terminator: "")
            return
        }
        let configuration = try loadConfiguration(options.path)
        let width = configuration.scenarios.map(\.name.count).max() ?? 0
        for scenario in configuration.scenarios {
            say(scenario.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + scenario.description)
        }
    }
}
