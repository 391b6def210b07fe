import Foundation
import HarnessTimeline
import Recording
import Testing

/// Two timelines are equivalent when they differ only in what must differ; otherwise the first point
/// where they part is named.
struct TimelineComparisonTests {
    static func event(_ sequence: Int, _ at: Double, _ kind: String, _ attributes: [String: String] = [:])
        -> TimelineEvent
    {
        TimelineEvent(
            sequence: sequence, elapsed: at, date: Date(), kind: EventKind(kind), source: "x",
            attributes: EventAttributes(attributes))
    }

    static let recorded = [
        event(1, 0, "harness.run.started"),
        event(2, 20, "harness.service.started", ["url": "http://127.0.0.1:4444"]),
        event(3, 20.5, "harness.step.started", ["step": "launch nasa-tv"]),
        event(4, 21, "apns.request.accepted", ["token": "ab12cd34ef56ab12cd34ef56ab12cd34", "pushType": "background"]),
        event(5, 21.1, "device.push.delivered", ["wake": "resumed", "pid": "4242"]),
        event(6, 21.2, "transfer.progress", ["bytes": "1000"]),
        event(7, 25, "media.fault.fired", ["atByte": "65536", "path": "/photos/p.jpg"]),
        event(8, 26, "transfer.completed", ["file": "/tmp/x/state/device/a.jpg"]),
    ]

    @Test func aRunThatDiffersOnlyInWhatMustDifferIsEquivalent() {
        // Another machine: slower to build (the first step later), other ports, tokens, pids and paths,
        // a different number of progress events, two racing events the other way round, and two
        // moments of load, each within the tolerance, that together put everything after them 3 s late.
        let run = [
            Self.event(1, 0, "harness.run.started"),
            Self.event(2, 60, "harness.service.started", ["url": "http://127.0.0.1:5555"]),
            Self.event(3, 61, "harness.step.started", ["step": "launch nasa-tv"]),
            Self.event(4, 61.6, "device.push.delivered", ["wake": "resumed", "pid": "99"]),
            Self.event(
                5, 61.55, "apns.request.accepted",
                ["token": "ffffcd34ef56ab12cd34ef56ab120000", "pushType": "background"]),
            Self.event(6, 65.4, "media.fault.fired", ["atByte": "65536", "path": "/photos/p.jpg"]),
            Self.event(7, 66.7, "transfer.completed", ["file": "/tmp/y/state/device/a.jpg"]),
        ]
        #expect(TimelineComparison.compare(expected: Self.recorded, actual: run) == nil)
    }

    @Test func theFaultAtAnotherByteIsTheFirstDivergence() throws {
        var run = Self.recorded
        run[6] = Self.event(7, 25, "media.fault.fired", ["atByte": "70000", "path": "/photos/p.jpg"])
        run[7] = Self.event(8, 26, "transfer.failed", [:])
        let divergence = try #require(TimelineComparison.compare(expected: Self.recorded, actual: run))
        #expect(divergence.kind == .different)
        #expect(divergence.summary == "media.fault.fired: expected {atByte: 65536}, got {atByte: 70000}")
        #expect(divergence.expected?.sequence == 7)
        #expect(divergence.actual?.sequence == 7)
        #expect(divergence.expectedAround.contains { $0.kind.rawValue == "device.push.delivered" })
    }

    @Test func aMissingEventIsNamedWithWhenItWasRecorded() throws {
        let run = Array(Self.recorded.prefix(7))
        let divergence = try #require(TimelineComparison.compare(expected: Self.recorded, actual: run))
        #expect(divergence.kind == .missing)
        #expect(divergence.summary.hasPrefix("expected transfer.completed"))
        #expect(divergence.summary.contains("recorded at 5.50 s"))
        #expect(divergence.actual == nil)
    }

    @Test func anExtraEventIsUnexpected() throws {
        let run = Self.recorded + [Self.event(9, 26.5, "device.watchdog.killed", ["app": "nasa-tv"])]
        let divergence = try #require(TimelineComparison.compare(expected: Self.recorded, actual: run))
        #expect(divergence.kind == .unexpected)
        #expect(divergence.summary.contains("device.watchdog.killed {app: nasa-tv}"))
    }

    @Test func anEventThatCameBeforeTheOneItFollowedIsSaidBeforeNotANegativeAfter() throws {
        var run = Self.recorded
        // Within the tolerance of the event before it in the recording (no order divergence), 1.5 s
        // before it now, where the recording had it 1 s after: 2.5 s apart, outside the tolerance.
        run[7] = Self.event(8, 23.5, "transfer.completed", ["file": "/tmp/x/state/device/a.jpg"])
        let divergence = try #require(TimelineComparison.compare(expected: Self.recorded, actual: run))
        #expect(divergence.summary.contains("came 1.50 s before media.fault.fired"), "\(divergence.summary)")
        #expect(!divergence.summary.contains("-"), "\(divergence.summary)")
    }

    @Test func anEventOutsideTheToleranceIsATimingDivergence() throws {
        var run = Self.recorded
        run[7] = Self.event(8, 29, "transfer.completed", ["file": "/tmp/x/state/device/a.jpg"])
        let divergence = try #require(TimelineComparison.compare(expected: Self.recorded, actual: run))
        #expect(divergence.kind == .timing)
        #expect(
            divergence.summary
                == "transfer.completed came 4.00 s after media.fault.fired; the recording has it 1.00 s after (tolerance 2.00 s)"
        )
        var wide = TimelineComparison.Options()
        wide.tolerance = 5
        #expect(TimelineComparison.compare(expected: Self.recorded, actual: run, options: wide) == nil)
    }

    @Test func eventsTheRecordingSeparatesMustKeepTheirOrder() throws {
        // Each within the tolerance of its recorded time, but the fault now fires after the transfer
        // completed, which the recording has a second apart the other way.
        var options = TimelineComparison.Options()
        options.tolerance = 0.6
        var run = Self.recorded
        run[6] = Self.event(8, 25.55, "media.fault.fired", ["atByte": "65536", "path": "/photos/p.jpg"])
        run[7] = Self.event(7, 25.45, "transfer.completed", ["file": "/tmp/x/state/device/a.jpg"])
        let divergence = try #require(
            TimelineComparison.compare(expected: Self.recorded, actual: run, options: options))
        #expect(divergence.kind == .order)
        #expect(divergence.summary.hasPrefix("transfer.completed came before media.fault.fired"))
    }

    /// Issue 32: events are paired device by device, so two devices racing do not make equal runs
    /// differ; a device's own event that differs is named with its device.
    @Test func twoDevicesRacingAreEquivalentAndADifferenceNamesItsDevice() throws {
        let recorded = [
            Self.event(1, 1.0, "apns.delivered", ["device": "alice", "priority": "10"]),
            Self.event(2, 1.01, "apns.delivered", ["device": "bob", "priority": "10"]),
        ]
        let raced = [
            Self.event(1, 1.0, "apns.delivered", ["device": "bob", "priority": "10"]),
            Self.event(2, 1.01, "apns.delivered", ["device": "alice", "priority": "10"]),
        ]
        #expect(TimelineComparison.compare(expected: recorded, actual: raced) == nil)
        let changed = [
            Self.event(1, 1.0, "apns.delivered", ["device": "bob", "priority": "10"]),
            Self.event(2, 1.01, "apns.delivered", ["device": "alice", "priority": "5"]),
        ]
        let divergence = try #require(TimelineComparison.compare(expected: recorded, actual: changed))
        #expect(divergence.summary == "apns.delivered on alice: expected {priority: 10}, got {priority: 5}")
    }

    @Test func aBackendsOutputIsNotCompared() {
        let recorded = [Self.event(1, 1.0, "backend.output", ["line": "listening on 41234"])]
        let run = [Self.event(1, 1.0, "backend.output", ["line": "listening on 50001"])]
        #expect(TimelineComparison.compare(expected: recorded, actual: run) == nil)
    }
}
