import Foundation

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
