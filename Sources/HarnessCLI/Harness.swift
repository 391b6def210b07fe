import ArgumentParser
import HarnessCore
import Logging
import Recording

/// The `harness` command: a thin layer over HarnessCore that parses arguments and prints.
@main
struct Harness: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "harness",
        abstract: "End-to-end tests of iOS push-driven flows: Parse → APNs → device → app → media server.",
        discussion: "Exit codes: 0 pass, 1 a scenario failed, 2 usage or configuration error, 130 interrupted.",
        subcommands: [
            Init.self, Doctor.self, Run.self, Replay.self, Diff.self, Export.self, List.self, Serve.self,
            FaultProxyCommand.self,
            ReportCommand.self,
        ])
}

struct ConfigOptions: ParsableArguments {
    @Option(
        name: .shortAndLong,
        help: "The scenario file (default harness.yml; 'harness replay' reads the cassette's copy by default).")
    var config: String?

    /// The scenario file to read.
    var path: String { config ?? "harness.yml" }

    @Flag(name: .shortAndLong, help: "Show the services' own log messages.")
    var verbose = false

    /// The services log only problems unless asked for more: the timeline is what users read.
    var logger: Logger {
        var logger = Logger(label: "harness")
        logger.logLevel = verbose ? .debug : .error
        return logger
    }
}

/// How `harness run` and `harness replay` set up what they run.
struct RunSetup: ParsableArguments {
    @Flag(help: "Bind every service to a free port instead of the configured ones, so runs can share a machine.")
    var ephemeralPorts = false

    @Flag(help: "Do not run the apps' build commands (they are already built).")
    var skipBuild = false

    /// `configuration` with these flags applied.
    func apply(to configuration: inout HarnessConfiguration) {
        if ephemeralPorts { configuration.useEphemeralPorts() }
        if skipBuild {
            for name in configuration.apps.keys { configuration.apps[name]?.build = nil }
        }
    }
}

/// How a replay matches requests to recorded entries, shared by `harness replay` and `harness serve`.
struct MatchingOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "What of a media request must agree with a recorded one: a comma list of method, host, path, query "
                + "(default method,path,query).", valueName: "parts"))
    var matchOn: String?

    @Option(
        help: ArgumentHelp(
            "The request headers whose values must agree too, comma-separated, '' for none "
                + "(default Range, If-Range, If-None-Match, If-Match, If-Modified-Since, If-Unmodified-Since).",
            valueName: "names"))
    var matchHeaders: String?

    /// The matching these options ask for; exits 2 naming the option when one cannot be used.
    func resolved() -> RequestMatching {
        var matching = RequestMatching()
        do {
            matching.fields = try RequestMatching(fields: matchOn, headers: nil).fields
        } catch {
            fail("--match-on: \(error)", code: 2)
        }
        do {
            matching.headers = try RequestMatching(fields: nil, headers: matchHeaders).headers
        } catch {
            fail("--match-headers: \(error)", code: 2)
        }
        return matching
    }
}
