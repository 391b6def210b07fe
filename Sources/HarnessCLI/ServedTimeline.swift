import HarnessTimeline

extension Timeline {
    /// The timeline of a long-running command (`harness serve`, `harness fault-proxy`): it keeps only
    /// recent events (a cassette gets those) rather than growing for as long as the services run: the
    /// newest 10,000, and never more than 8 MiB of them (docs/limits.md).
    static func served() -> Timeline {
        Timeline(retention: 10_000, budget: 8 << 20)
    }
}
