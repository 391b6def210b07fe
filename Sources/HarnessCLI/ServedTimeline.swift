import HarnessTimeline

extension Timeline {
    /// The timeline of a long-running command (`harness serve`, `harness fault-proxy`): nothing reads it
    /// back, so it keeps only recent events rather than growing for as long as the services run: never
    /// more than 8 MiB of them (about 4,000–8,000 of FakeAPNs's) nor more than 20,000 (docs/limits.md).
    static func served() -> Timeline {
        Timeline(retention: 10_000, budget: 8 << 20)
    }
}
