import Foundation

/// `meta.json`: what the cassette is, what it was recorded from, and whether the recording finished.
/// Written last, so a cassette without it was never closed.
public struct CassetteMeta: Codable, Sendable, Equatable {
    public static let formatName = "pushharness-cassette"
    /// The format this build writes and the newest it reads. Version 2 adds `run`, how the run was made.
    public static let currentVersion = 2

    public var format: String
    public var version: Int
    /// The scenario run, or nil for a `harness serve` recording.
    public var scenario: String?
    /// The SHA-256 of the harness.yml the run read, to tell a replay its scenarios have changed.
    public var harnessYmlSha256: String?
    /// The seeds the run's random choices used (fault rules without a seed of their own get one here).
    public var seeds: [String: UInt64]
    public var recordedAt: String
    /// False when the recording was interrupted (Ctrl-C): everything up to then is in the cassette.
    public var complete: Bool
    /// The run's outcome as `harness run` reported it (`passed`, `failed`, …).
    public var outcome: String?
    public var entries: Int
    /// Set when the cassette was recovered from a recording whose process was killed (SIGKILL, a
    /// crash): what was journaled by then, with the damage counted. Such a cassette is not complete.
    public var recovered: Recovery?
    /// How the run was made, for `harness replay DIR` to make it again; nil in a version 1 cassette and
    /// in a `harness serve` recording.
    public var run: Run?
    /// The run's timeline clock, in seconds, when the cassette's clock (entries' `_offset`) began: what
    /// places the timeline's events among the entries. Nil in older cassettes and `harness serve` ones.
    public var timelineAtStart: Double?

    public init(scenario: String?, harnessYmlSha256: String?, seeds: [String: UInt64], recordedAt: String) {
        self.format = Self.formatName
        self.version = Self.currentVersion
        self.scenario = scenario
        self.harnessYmlSha256 = harnessYmlSha256
        self.seeds = seeds
        self.recordedAt = recordedAt
        self.complete = false
        self.entries = 0
    }
}

extension CassetteMeta {
    /// What `harness run` was given, beside the copy of harness.yml it read (the cassette's
    /// `harness.yml`): with them the replay resolves the same scenario, the same cell, the same apps.
    public struct Run: Codable, Sendable, Equatable {
        /// The file the recorded run's copy of harness.yml is kept in, inside the cassette.
        public static let configurationFile = "harness.yml"

        /// The scenario as harness.yml names it: a matrix cell's scenario, without its profile.
        public var scenario: String
        /// A matrix cell's network profile (`none` for a cell without one); nil outside a matrix.
        public var network: String?
        /// The harness.yml as the command line named it.
        public var config: String
        /// The folder the run resolved relative paths against (app commands, the media root), absolute.
        public var baseDirectory: String
        /// The `--app NAME=OTHER` replacements, in order.
        public var apps: [String]
        /// Whether every service had a free port (`--ephemeral-ports`).
        public var ephemeralPorts: Bool
        /// Whether the apps' build commands were skipped (`--skip-build`).
        public var skipBuild: Bool

        public init(
            scenario: String, network: String? = nil, config: String, baseDirectory: String, apps: [String] = [],
            ephemeralPorts: Bool = false, skipBuild: Bool = false
        ) {
            self.scenario = scenario
            self.network = network
            self.config = config
            self.baseDirectory = baseDirectory
            self.apps = apps
            self.ephemeralPorts = ephemeralPorts
            self.skipBuild = skipBuild
        }
    }

    /// How a cassette was recovered from a killed recording (`meta.json`'s `recovered`).
    public struct Recovery: Codable, Sendable, Equatable {
        /// The process that was recording when it died.
        public var pid: Int32
        /// The folder it was recovered from, as it was named beside the cassette folder.
        public var partial: String
        public var recoveredAt: String
        /// The exchanges recovered: every whole record of the journal whose body was whole.
        public var exchanges: Int
        /// Bytes of a last record cut short by the kill, dropped.
        public var tornBytes: Int
        /// Whole journal lines (1-based) that were not a HAR entry, dropped.
        public var unreadableLines: [Int]
        /// Exchanges dropped because their body file was missing or shorter than recorded.
        public var missingBodies: Int
        /// Bytes of transcript lines cut short by the kill, dropped (each transcript ends at its last
        /// whole line).
        public var tornTranscriptBytes: Int

        public init(
            pid: Int32, partial: String, recoveredAt: String, exchanges: Int, tornBytes: Int = 0,
            unreadableLines: [Int] = [], missingBodies: Int = 0, tornTranscriptBytes: Int = 0
        ) {
            self.pid = pid
            self.partial = partial
            self.recoveredAt = recoveredAt
            self.exchanges = exchanges
            self.tornBytes = tornBytes
            self.unreadableLines = unreadableLines
            self.missingBodies = missingBodies
            self.tornTranscriptBytes = tornTranscriptBytes
        }

        /// What was recovered and what was lost, in words: `12 exchanges; a torn last record of 87
        /// bytes dropped`.
        public var summary: String {
            var parts = ["\(exchanges) exchange\(exchanges == 1 ? "" : "s")"]
            if tornBytes > 0 { parts.append("a torn last record of \(tornBytes) bytes dropped") }
            if !unreadableLines.isEmpty {
                let lines = unreadableLines.prefix(5).map { String($0) }.joined(separator: ", ")
                parts.append(
                    "\(unreadableLines.count) unreadable journal line\(unreadableLines.count == 1 ? "" : "s") dropped "
                        + "(\(lines)\(unreadableLines.count > 5 ? ", …" : ""))")
            }
            if missingBodies > 0 {
                parts.append(
                    "\(missingBodies) exchange\(missingBodies == 1 ? "" : "s") dropped for a missing body file")
            }
            if tornTranscriptBytes > 0 {
                parts.append("\(tornTranscriptBytes) bytes of torn transcript lines dropped")
            }
            return parts.joined(separator: "; ")
        }
    }

    /// Why the cassette is not complete, in words; nil when it is.
    public var incompleteness: String? {
        guard !complete else { return nil }
        if let recovered {
            return "it was recovered from a recording that process \(recovered.pid) was making when it was killed "
                + "(\(recovered.summary)); it holds what was journaled by then"
        }
        return "the recording was interrupted; it holds everything up to then"
    }
}
