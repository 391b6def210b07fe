import HarnessTimeline
import Recording
import Testing

/// Every attribute an event can carry is either compared between runs or left out on purpose: a new
/// attribute that differs from run to run (a clock reading, an id) would make every replay diverge, so
/// whoever adds one must decide here which it is.
struct ComparedAttributesTests {
    /// Attributes whose values are the same in two runs of the same world, once the comparison has
    /// normalised UUIDs, long hex runs, loopback ports and temporary paths in them.
    static let sameInEveryRun: Set<String> = [
        "alertBody", "alertTitle", "allowance", "allowsCellularAccess", "appIdentifier", "appState",
        "atByte", "attempt", "backend", "badge", "body", "bootLaunchDelay", "budget", "bundleId", "button", "by",
        "bytes",
        "cancelledReason", "cause", "code", "collapseId", "command", "count", "completionId", "created", "decision",
        "detail",
        "deviceType", "discretionary", "environment", "error", "event", "expected", "fault", "field", "fireIn",
        "firstByteDelay", "for", "fromByte", "held", "how", "identifier", "latency", "limit", "line", "locked",
        "lostBytes", "message", "method", "name", "nearest", "network", "next", "numFailed", "numSent", "of",
        "outcome", "part", "path", "payload", "pending", "playbackURL", "presentation", "presented", "priority",
        "problem", "pushType", "range", "reason", "recipients", "replaced", "replacedBy", "result", "resumeData",
        "retryIn", "scenario", "screen", "serverThrottle", "service", "session", "sha256", "shownCount", "state",
        "status", "stored", "stream", "style", "task", "taskDescription", "termination", "text", "throttle", "title",
        "topic", "wake", "why",
        // The fault proxy's: names, addresses (their loopback ports normalised) and toxic settings.
        "average_size", "delay", "enabled", "jitter", "listen", "proxy", "rate", "size_variation", "timeout",
        "toxic", "toxicity", "type", "upstream", "per_million", "retransmit", "retry_after", "body_bytes", "reset",
        // The network's: link names and their conditions (a run's draws repeat with its seed).
        "link", "condition",
        // A scenario's named device: the same names in every run.
        "device",
        // A line a replay's stand-in says again for the backend it stands in for.
        "replayed",
        // What the device warns about a push's shape.
        "warning",
        // What a refused write was writing (the same part of the same push in every run).
        "what",
        // What a delivery command printed, for the same notification.
        "output",
    ]

    @Test func everyAttributeIsComparedOrLeftOutOnPurpose() {
        let ignored = TimelineComparison.Options().ignoredAttributes
        for spec in EventCatalogue.all {
            for attribute in spec.attributes + spec.optional {
                #expect(
                    Self.sameInEveryRun.contains(attribute) || ignored.contains(attribute),
                    "\(spec.kind).\(attribute): decide whether two runs of the same world give it the same value")
            }
        }
    }

    @Test func noAttributeIsBothComparedAndIgnored() {
        let both = Self.sameInEveryRun.intersection(TimelineComparison.Options().ignoredAttributes)
        #expect(both.isEmpty, "\(both.sorted()) are in both lists")
    }
}
