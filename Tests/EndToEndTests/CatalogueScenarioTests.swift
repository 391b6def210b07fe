import Foundation
import TestSupport
import Testing

/// Catalogue scenarios run as a user runs them, each scenario's own chain and `never` list being the
/// assertions: FakeAPNs's delivery rules with a real simulated device going offline and online,
/// background downloads through media faults, and the app's life cycle (crash, force-quit, suspension)
/// around silent pushes and background sessions.
@Suite struct CatalogueScenarioTests {
    @Test(arguments: [
        "offline-store-and-forward", "offline-expiry", "alert-collapse", "priority-5-coalesced",
        "resume-after-disconnect", "restart-without-accept-ranges", "silent-push-foreground", "silent-push-after-crash",
        "silent-push-force-quit", "transfer-survives-crash", "transfer-cancelled-by-force-quit",
        "transfer-completes-while-suspended", "discretionary-waits-for-wifi", "transfer-waits-for-connectivity",
        "background-app-refresh-off", "push-budget-holds-wakes", "held-push-discarded-on-crash", "background-fetch",
        "background-fetch-after-jetsam", "lock-and-unlock", "reboot-restores-push-launches",
        "tap-notification-opens-app",
        "user-notification-on-screen", "rate-limiter-delays-background-tasks", "silent-push-background",
        "push-without-content-available", "silent-push-with-alert", "background-time-delays-suspension",
        "silent-push-photo-slow-network", "silent-push-photo-slow-network-fixed", "unregistered-device",
        "silent-push-photo-title", "regular-push-photo", "video-download-foreground", "video-download-background",
        "video-download-crash", "video-download-force-quit", "video-offline-playback", "silent-push-not-running",
        "podcast-content-id", "slow-parse-installation-retry", "apns-unreachable-push-failed",
        "push-expires-on-lost-apns-connection", "dropped-push-background-fetch", "network-change-mid-download",
        "parse-push-fan-out-20", "pushchat-exchange", "pushchat-leave", "pushchat-message-too-long",
        "pushchat-feedback",
    ])
    func scenarioPasses(_ scenario: String) async throws {
        let (result, reports) = try await HarnessCommand.runCatalogueScenario(scenario)
        #expect(result.status == 0, "\(result.transcript)")
        #expect(result.standardOutput.contains("PASS \(scenario)"))
        let timeline = try String(contentsOf: reports.appendingPathComponent("timeline.jsonl"), encoding: .utf8)
        #expect(!timeline.isEmpty)
    }

    /// The same app in other languages, over the same device protocol, in place of the Swift one: the
    /// Python reference app (Fixtures/apps/nasa_tv.py) on the main chain and the background-session
    /// scenarios, and the Perl app (Fixtures/apps/nasa_tv.pl), written from docs/writing-an-app.md and
    /// docs/device-protocol.md alone, on the main chain, a background relaunch for its session and a
    /// launch by a push. `marker` is a line only that app logs, so the run proves which app ran.
    @Test(arguments: [
        ("nasa-tv-python", "silent-push-photo", "in Python"),
        ("nasa-tv-python", "transfer-survives-crash", "in Python"),
        ("nasa-tv-python", "transfer-cancelled-by-force-quit", "in Python"),
        ("nasa-tv-perl", "silent-push-photo", "nasa_tv.pl: "),
        ("nasa-tv-perl", "transfer-survives-crash", "nasa_tv.pl: "),
        ("nasa-tv-perl", "silent-push-not-running", "nasa_tv.pl: "),
    ])
    func theAppInAnotherLanguagePasses(_ app: String, _ scenario: String, _ marker: String) async throws {
        let (result, reports) = try await HarnessCommand.runCatalogueScenario(scenario, ["--app", "nasa-tv=\(app)"])
        #expect(result.status == 0, "\(result.transcript)")
        #expect(result.standardOutput.contains("PASS \(scenario)"))
        let timeline = try String(contentsOf: reports.appendingPathComponent("timeline.jsonl"), encoding: .utf8)
        #expect(timeline.contains(marker), "\(app) ran")
    }
}
