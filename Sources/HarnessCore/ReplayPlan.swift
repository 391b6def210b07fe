import Foundation
import Recording

/// What `harness replay DIR` runs: the recorded run again (its copy of harness.yml, its scenario, its
/// matrix cell, its app replacements, in the folder it ran in), each part unless the command line
/// overrides it, and every override said in words. Pure: the command reads the files it names.
public struct ReplayPlan: Sendable, Equatable {
    /// Where the scenario comes from.
    public enum Configuration: Sendable, Equatable {
        /// The copy of harness.yml the cassette keeps.
        case recorded
        /// A file the command line named (`-c`), or harness.yml in the current folder for a cassette
        /// that keeps no copy.
        case file(String)
    }

    public var configuration: Configuration
    /// The scenario as harness.yml names it.
    public var scenario: String
    /// The network profile of the matrix cell to run (`none` for a cell without one); nil: no cell.
    public var network: String?
    /// `--app NAME=OTHER` replacements.
    public var apps: [String]
    public var ephemeralPorts: Bool
    public var skipBuild: Bool
    /// The folder relative paths resolve against.
    public var baseDirectory: String
    /// What the command line changed of the recorded run, a line each.
    public var overrides: [String] = []
    /// What else the replay should know, a line each.
    public var notes: [String] = []

    /// What the command line gave `harness replay`.
    public struct Command: Sendable {
        public var config: String?
        public var apps: [String]
        public var network: String?
        public var ephemeralPorts: Bool
        public var skipBuild: Bool
        /// The current folder, absolute.
        public var currentDirectory: String

        public init(
            config: String?, apps: [String], network: String?, ephemeralPorts: Bool, skipBuild: Bool,
            currentDirectory: String
        ) {
            self.config = config
            self.apps = apps
            self.network = network
            self.ephemeralPorts = ephemeralPorts
            self.skipBuild = skipBuild
            self.currentDirectory = currentDirectory
        }
    }

    /// - Parameters:
    ///   - scenario: the cassette's `meta.json` scenario (a matrix cell's name, `name[profile]`).
    ///   - recipe: how the run was made; nil in a cassette written before cassettes kept it.
    ///   - folderExists: whether a folder is there, for the recorded run's.
    ///   - keepsConfiguration: whether the cassette keeps its copy of harness.yml.
    public static func decide(
        scenario recorded: String, recipe: CassetteMeta.Run?, keepsConfiguration: Bool = true, command: Command,
        folderExists: (String) -> Bool
    ) -> ReplayPlan {
        func folder(of file: String) -> String {
            let url =
                file.hasPrefix("/")
                ? URL(fileURLWithPath: file)
                : URL(fileURLWithPath: command.currentDirectory).appendingPathComponent(file)
            return url.deletingLastPathComponent().standardizedFileURL.path
        }
        guard let recipe else {
            // An older cassette names the scenario alone, a matrix cell as `name[profile]`.
            let (name, cell) = Self.cell(of: recorded)
            let config = command.config ?? "harness.yml"
            return ReplayPlan(
                configuration: .file(config), scenario: name, network: command.network ?? cell,
                apps: command.apps, ephemeralPorts: command.ephemeralPorts, skipBuild: command.skipBuild,
                baseDirectory: folder(of: config),
                notes: [
                    "the cassette does not keep how its run was made (it was recorded before harness.yml was kept); "
                        + "\(config) is read as it is now"
                ])
        }
        // The apps are built here as they are for any run: a recording that skipped it (a CI job that had
        // built them) does not make a laptop skip it.
        var plan = ReplayPlan(
            configuration: .recorded, scenario: recipe.scenario, network: recipe.network, apps: recipe.apps,
            ephemeralPorts: recipe.ephemeralPorts || command.ephemeralPorts, skipBuild: command.skipBuild,
            baseDirectory: recipe.baseDirectory)
        if recipe.skipBuild, !command.skipBuild {
            plan.notes.append(
                "the recording skipped the apps' build commands; this replay runs them (--skip-build skips)")
        }
        if let config = command.config {
            plan.configuration = .file(config)
            plan.baseDirectory = folder(of: config)
            plan.overrides.append("-c \(config): the scenario as that file has it now, not the recorded copy")
        } else if !folderExists(recipe.baseDirectory) {
            plan.baseDirectory = command.currentDirectory
            plan.notes.append(
                "the folder the recording ran in (\(recipe.baseDirectory)) is not here: app commands and files are "
                    + "looked for in \(command.currentDirectory)")
        }
        if command.config == nil, !keepsConfiguration {
            // A copy whose keys could not be replaced was not kept: the file is read as it is now.
            let file = URL(fileURLWithPath: plan.baseDirectory)
                .appendingPathComponent(URL(fileURLWithPath: recipe.config).lastPathComponent).path
            plan.configuration = .file(file)
            plan.notes.append("the cassette keeps no copy of harness.yml; \(file) is read as it is now")
        }
        if !command.apps.isEmpty {
            plan.apps = command.apps
            let was = recipe.apps.isEmpty ? "the scenario's own apps" : recipe.apps.joined(separator: " ")
            plan.overrides.append("--app \(command.apps.joined(separator: " ")) in place of \(was)")
        }
        if let network = command.network, network != recipe.network {
            plan.network = network
            plan.overrides.append("--network \(network) in place of \(recipe.network ?? "the scenario's own network")")
        }
        return plan
    }

    /// A matrix cell's name split into its scenario and profile: `a[3G]` is `a` under 3G.
    static func cell(of name: String) -> (scenario: String, profile: String?) {
        guard name.hasSuffix("]"), let open = name.lastIndex(of: "["), open > name.startIndex else {
            return (name, nil)
        }
        let profile = name[name.index(after: open)..<name.index(before: name.endIndex)]
        guard !profile.isEmpty else { return (name, nil) }
        return (String(name[..<open]), String(profile))
    }
}
