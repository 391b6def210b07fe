import Foundation

/// Why report folders cannot be joined.
public enum MergeError: Error, CustomStringConvertible, Equatable {
    /// The shards' reports name different commits (listed with their folders).
    case differentCommits(String)
    /// The shards ran different harness.yml contents (listed by SHA-256 with their folders).
    case differentHarnessYml(String)
    /// A summary names a scenario that is no report folder's name inside its shard.
    case notAScenarioName(String, in: String)
    /// A scenario (or cell) in two shards.
    case inTwoShards(String, String, String)
    /// No folder to join.
    case noFolders
    /// A folder with no summary.json to read.
    case notABatchFolder(String, summary: String)
    case unreadable(String, error: String)
    /// A summary.json over 64 MiB.
    case tooLarge(String)
    case notASummary(String, error: String)
    /// The folder to join into holds something already.
    case outputNotEmpty(String)
    /// A shard's report folder that is a symbolic link, or no folder.
    case notAFolder(String, symbolicLink: Bool)

    public var description: String {
        switch self {
        case .differentCommits(let listed): "the reports come from different commits: \(listed)"
        case .differentHarnessYml(let listed):
            "the reports come from different harness.yml contents (SHA-256): \(listed)"
        case .notAScenarioName(let name, let folder):
            "\(folder)/summary.json: '\(name)' is not a scenario's name (a report folder's name inside \(folder))"
        case .inTwoShards(let scenario, let first, let second):
            "'\(scenario)' is in both \(first) and \(second): a scenario or cell belongs to one shard"
        case .noFolders: "name the report folders to join"
        case .notABatchFolder(let folder, let file):
            "\(file): cannot be read: \(folder) is not the report folder of a batch"
        case .unreadable(let file, let error): "\(file): cannot be read (\(error))"
        case .tooLarge(let file): "\(file): is over 64 MiB"
        case .notASummary(let file, let error): "\(file): is not a batch's summary.json (\(error))"
        case .outputNotEmpty(let output): "\(output): is not empty; join the reports into a new folder"
        case .notAFolder(let path, let link): "\(path): is \(link ? "a symbolic link" : "not a folder")"
        }
    }
}
