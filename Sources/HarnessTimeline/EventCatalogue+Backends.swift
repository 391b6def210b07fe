/// What the backends under test did: started, ready, printed, ended, stopped. A part of
/// ``EventCatalogue/all`` of its own, after the harness's events.
extension EventCatalogue {
    static let backends: [EventSpec] = [
        EventSpec(
            kind: .backendStarted, source: "backend", attributes: ["backend", "pid", "command"],
            meaning: "The harness started a backend's process."),
        EventSpec(
            kind: .backendReady, source: "backend", attributes: ["backend", "how", "after"],
            meaning:
                "A backend became ready (`how`: its readiness check) `after` its start; the next one starts now. "
                + "A replay `--without-backend` says it of its stand-in, at once (`how`: a stand-in answering from the cassette)."
        ),
        EventSpec(
            kind: .backendOutput, source: "backend", attributes: ["backend", "line"], optional: ["replayed"],
            meaning:
                "A line a backend printed on its standard output or error; `replayed: true` when a replay "
                + "`--without-backend` says again a line the recorded backend printed, at its recorded moment."),
        EventSpec(
            kind: .backendExited, source: "backend", attributes: ["backend", "how"],
            meaning:
                "A backend's process ended (`how`: its exit status or signal); before the run's end, this fails the run."
        ),
        EventSpec(
            kind: .backendStopped, source: "backend", attributes: ["backend", "how"],
            meaning: "The harness stopped a backend at the end of the run: SIGTERM, then SIGKILL after its grace."),
    ]
}
