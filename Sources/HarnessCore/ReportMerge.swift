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
            return .failure(.differentCommits(listed(commits)))
        }
        let digests = groups(\.harnessYmlSha256)
        guard digests.count == 1 else {
            return .failure(.differentHarnessYml(listed(digests)))
        }
        var results: [(summary: RunReport.Summary, folder: String)] = []
        for shard in shards {
            for summary in shard.summary.results {
                // A scenario's name is its report folder's: one name inside the folder, never a path.
                let name = summary.scenario
                guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.contains("\0") else {
                    return .failure(.notAScenarioName(String(name.prefix(80)), in: shard.folder))
                }
                if let other = results.first(where: { $0.summary.scenario == summary.scenario }) {
                    return .failure(.inTwoShards(summary.scenario, other.folder, shard.folder))
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

    /// A kept cassette as a summary names it, when it can be carried into the joined report: a path
    /// inside the folder the merge runs in (relative, no `..`), as `--record-failures` names one there.
    static func carriedCassette(_ path: String) -> String? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard !path.hasPrefix("/"), !parts.isEmpty, !parts.contains(where: { $0 == ".." || $0.isEmpty }) else {
            return nil
        }
        return path
    }

    /// Joins `folders` into `output`: each scenario's folder copied in, each kept cassette into
    /// `output/cassettes/`, and one `junit.xml`, `summary.json` and `index.html` (the whole matrix table)
    /// over all of them.
    ///
    /// - Returns: how many scenarios or cells the joined report holds, and what was left out, a line each.
    /// - Throws: ``MergeError`` naming the folder or file that cannot be used; `output` is left as it
    ///   was when the folders are refused.
    public static func merge(_ folders: [String], into output: String) throws -> (count: Int, notes: [String]) {
        guard !folders.isEmpty else { throw MergeError.noFolders }
        let manager = FileManager.default
        var shards: [Shard] = []
        for folder in folders {
            let file = URL(fileURLWithPath: folder).appendingPathComponent("summary.json")
            guard let handle = FileHandle(forReadingAtPath: file.path) else {
                throw MergeError.notABatchFolder(folder, summary: file.path)
            }
            // Closing a file that was only read loses nothing: a failure to close is no failure to read.
            defer { try? handle.close() }
            let data: Data
            do {
                data = try handle.read(upToCount: largestSummary + 1) ?? Data()
            } catch {
                throw MergeError.unreadable(file.path, error: error.localizedDescription)
            }
            guard data.count <= largestSummary else { throw MergeError.tooLarge(file.path) }
            do {
                shards.append(Shard(folder: folder, summary: try JSONDecoder().decode(BatchSummary.self, from: data)))
            } catch {
                throw MergeError.notASummary(file.path, error: "\(error)")
            }
        }
        let plan = try plan(shards).get()
        let target = URL(fileURLWithPath: output).standardizedFileURL
        if let present = try? manager.contentsOfDirectory(atPath: target.path), !present.isEmpty {
            throw MergeError.outputNotEmpty(output)
        }
        try manager.createDirectory(at: target, withIntermediateDirectories: true)
        var results: [RunResult] = []
        var summaries: [RunReport.Summary] = []
        var notes: [String] = []
        let here = URL(fileURLWithPath: manager.currentDirectoryPath)
        for (summary, folder) in plan.results {
            var summary = summary
            let source = URL(fileURLWithPath: folder).appendingPathComponent(summary.scenario)
            let copy = target.appendingPathComponent(summary.scenario)
            // A scenario an interruption kept from starting has no folder.
            if try !copyFolder(source, to: copy), summary.outcome != "SKIPPED" {
                notes.append("\(source.path): no report folder; its line is kept")
            }
            var cassette: URL?
            if let named = summary.cassette {
                let carried = carriedCassette(named).map { here.appendingPathComponent($0).standardizedFileURL }
                let kept = target.appendingPathComponent("cassettes").appendingPathComponent(summary.scenario)
                if let carried, try copyFolder(carried, to: kept) {
                    cassette = kept
                } else {
                    notes.append("\(summary.scenario): its cassette \(named) is not in this folder; it is not linked")
                }
            }
            summary.cassette = cassette.map { RunReport.path(of: $0, from: here.path) }
            summaries.append(summary)
            results.append(RunResult(summary, reportDirectory: copy, cassette: cassette))
        }
        let summary = BatchSummary(
            summaries: summaries, seconds: plan.seconds, parallel: plan.parallel, commit: plan.commit,
            harnessYmlSha256: plan.harnessYmlSha256)
        try BatchSummary.write(summary, results: results, into: target, seconds: plan.seconds, parallel: plan.parallel)
        return (results.count, notes)
    }

    /// Copies the folder at `source` to `destination`; false when there is none. A link is refused: the
    /// joined report holds what the shards wrote, never what a link points at.
    private static func copyFolder(_ source: URL, to destination: URL) throws -> Bool {
        let manager = FileManager.default
        guard let type = try? manager.attributesOfItem(atPath: source.path)[.type] as? FileAttributeType else {
            return false
        }
        guard type == .typeDirectory else {
            throw MergeError.notAFolder(source.path, symbolicLink: type == .typeSymbolicLink)
        }
        try manager.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        try manager.copyItem(at: source, to: destination)
        return true
    }
}
