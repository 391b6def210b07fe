import Foundation

/// Joins the report folders of a sharded run (each a `harness run` batch's `summary.json`, `junit.xml`,
/// `index.html` and a folder per scenario) into one, refusing folders made from different commits or
/// harness.yml contents, and a scenario or cell that two of them ran. Pure: ``merge(_:into:)`` reads
/// and writes around it.
public enum ReportMerge {
    /// One folder to join and its summary.
    struct Shard {
        var folder: String
        var summary: BatchSummary
    }

    /// What the joined report holds: each result with the folder it comes from.
    struct Plan {
        var results: [(summary: RunReport.Summary, folder: String)]
        var commit: String?
        var harnessYmlSha256: String?
        /// The longest shard's time: the shards ran side by side.
        var seconds: Double
        var parallel: Int
    }

    static func plan(_ shards: [Shard]) -> Result<Plan, MergeError> {
        func groups(_ value: (BatchSummary) -> String?) -> [(value: String, folders: [String])] {
            var seen: [(value: String, folders: [String])] = []
            for shard in shards {
                let key = value(shard.summary) ?? "none"
                if let index = seen.firstIndex(where: { $0.value == key }) {
                    seen[index].folders.append(shard.folder)
                } else {
                    seen.append((key, [shard.folder]))
                }
            }
            return seen
        }
        func listed(_ seen: [(value: String, folders: [String])]) -> String {
            seen.map { "\($0.value.prefix(12)) (\($0.folders.joined(separator: ", ")))" }.joined(separator: " and ")
        }
        let commits = groups(\.commit)
        guard commits.count == 1 else {
            return .failure(MergeError("the reports come from different commits: \(listed(commits))"))
        }
        let digests = groups(\.harnessYmlSha256)
        guard digests.count == 1 else {
            return .failure(
                MergeError("the reports come from different harness.yml contents (SHA-256): \(listed(digests))"))
        }
        var results: [(summary: RunReport.Summary, folder: String)] = []
        for shard in shards {
            for summary in shard.summary.results {
                if let other = results.first(where: { $0.summary.scenario == summary.scenario }) {
                    return .failure(
                        MergeError(
                            "'\(summary.scenario)' is in both \(other.folder) and \(shard.folder): a scenario "
                                + "or cell belongs to one shard"))
                }
                results.append((summary, shard.folder))
            }
        }
        return .success(
            Plan(
                results: results, commit: shards.first?.summary.commit,
                harnessYmlSha256: shards.first?.summary.harnessYmlSha256,
                seconds: shards.map(\.summary.seconds).filter(\.isFinite).max() ?? 0,
                parallel: shards.map(\.summary.parallel).max() ?? 1))
    }

    /// The most a `summary.json` may hold.
    static let largestSummary = 64 << 20

    /// Joins `folders` into `output`: each scenario's folder copied in, and one `junit.xml`,
    /// `summary.json` and `index.html` (the whole matrix table) over all of them.
    ///
    /// - Returns: how many scenarios or cells the joined report holds.
    /// - Throws: ``MergeError`` naming the folder or file that cannot be used; `output` is left as it
    ///   was when the folders are refused.
    public static func merge(_ folders: [String], into output: String) throws -> Int {
        guard !folders.isEmpty else { throw MergeError("name the report folders to join") }
        let manager = FileManager.default
        var shards: [Shard] = []
        for folder in folders {
            let file = URL(fileURLWithPath: folder).appendingPathComponent("summary.json")
            guard let handle = FileHandle(forReadingAtPath: file.path) else {
                throw MergeError("\(file.path): cannot be read: \(folder) is not the report folder of a batch")
            }
            // Closing a file that was only read loses nothing: a failure to close is no failure to read.
            defer { try? handle.close() }
            let data: Data
            do {
                data = try handle.read(upToCount: largestSummary + 1) ?? Data()
            } catch {
                throw MergeError("\(file.path): cannot be read (\(error.localizedDescription))")
            }
            guard data.count <= largestSummary else { throw MergeError("\(file.path): is over 64 MiB") }
            do {
                shards.append(Shard(folder: folder, summary: try JSONDecoder().decode(BatchSummary.self, from: data)))
            } catch {
                throw MergeError("\(file.path): is not a batch's summary.json (\(error))")
            }
        }
        let plan = try plan(shards).get()
        let target = URL(fileURLWithPath: output).standardizedFileURL
        if let present = try? manager.contentsOfDirectory(atPath: target.path), !present.isEmpty {
            throw MergeError("\(output): is not empty; join the reports into a new folder")
        }
        try manager.createDirectory(at: target, withIntermediateDirectories: true)
        var results: [RunResult] = []
        for (summary, folder) in plan.results {
            let source = URL(fileURLWithPath: folder).appendingPathComponent(summary.scenario)
            let copy = target.appendingPathComponent(summary.scenario)
            // A scenario an interruption kept from starting has no folder.
            if manager.fileExists(atPath: source.path) { try manager.copyItem(at: source, to: copy) }
            let cassette = summary.cassette.map {
                URL(fileURLWithPath: $0, relativeTo: URL(fileURLWithPath: manager.currentDirectoryPath))
                    .standardizedFileURL
            }
            results.append(RunResult(summary, reportDirectory: copy, cassette: cassette))
        }
        let summary = BatchSummary(
            summaries: plan.results.map(\.summary), seconds: plan.seconds, parallel: plan.parallel,
            commit: plan.commit, harnessYmlSha256: plan.harnessYmlSha256)
        try BatchSummary.write(summary, results: results, into: target, seconds: plan.seconds, parallel: plan.parallel)
        return results.count
    }
}

/// Why report folders cannot be joined.
public struct MergeError: Error, CustomStringConvertible, Equatable {
    public var description: String

    init(_ description: String) { self.description = description }
}

/// The commit a run is made from: `HARNESS_COMMIT`, else the CI's own variable (GitHub's `GITHUB_SHA`,
/// GitLab's `CI_COMMIT_SHA`), else what the git checkout around `folder` has checked out; nil outside one.
public enum GitCommit {
    public static func current(in folder: URL, environment: [String: String]) -> String? {
        for name in ["HARNESS_COMMIT", "GITHUB_SHA", "CI_COMMIT_SHA"] {
            if let value = environment[name], !value.isEmpty { return String(value.prefix(64)) }
        }
        var directory = folder.standardizedFileURL
        while true {
            let git = directory.appendingPathComponent(".git")
            if let head = read(git.appendingPathComponent("HEAD")) { return resolve(firstLine(head), in: git) }
            let parent = directory.deletingLastPathComponent()
            guard parent.path != directory.path else { return nil }
            directory = parent
        }
    }

    /// `HEAD`'s commit: the hash itself, or the branch it names (a loose ref, else `packed-refs`).
    static func resolve(_ head: String, in git: URL) -> String? {
        guard head.hasPrefix("ref: ") else { return head.isEmpty ? nil : head }
        let reference = String(head.dropFirst(5))
        if let loose = read(git.appendingPathComponent(reference)).map(firstLine), !loose.isEmpty { return loose }
        let packed = read(git.appendingPathComponent("packed-refs")) ?? ""
        for line in packed.split(separator: "\n") where line.hasSuffix(" " + reference) {
            return String(line.prefix { $0 != " " })
        }
        return nil
    }

    /// A small file's text (its first mebibyte); nil when it cannot be read.
    private static func read(_ url: URL) -> String? {
        guard let handle = FileHandle(forReadingAtPath: url.path) else { return nil }
        // Only read: a failure to close it loses nothing.
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: 1 << 20) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    private static func firstLine(_ text: String) -> String {
        String(text.prefix { $0 != "\n" }).trimmingCharacters(in: .whitespaces)
    }
}
