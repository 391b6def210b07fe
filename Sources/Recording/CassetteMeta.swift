import Foundation

/// `meta.json`: what the cassette is, what it was recorded from, and whether the recording finished.
/// Written last, so a cassette without it was never closed.
public struct CassetteMeta: Codable, Sendable, Equatable {
    public static let formatName = "pushharness-cassette"
    /// The format this build writes and the newest it reads.
    public static let currentVersion = 1

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
