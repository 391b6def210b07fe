import Recording
import Testing

/// vcrpy's record modes, row by row, for a cassette that exists or not, with or without an upstream.
struct CassettePlanTests {
    typealias Plan = CassettePlan

    static let replayOnly = Plan(replays: true, passesThrough: false, recording: .none)
    static let recordAll = Plan(replays: false, passesThrough: true, recording: .fresh)
    static let addNew = Plan(replays: true, passesThrough: true, recording: .adding)

    @Test(
        arguments: [
            (RecordMode.none, true, false, Self.replayOnly),
            (.none, true, true, Self.replayOnly),
            (.once, true, true, Self.replayOnly),
            (.once, false, true, Self.recordAll),
            (.once, false, false, Self.recordAll),
            (.all, true, true, Self.recordAll),
            (.all, false, false, Self.recordAll),
            (.newEpisodes, false, true, Self.recordAll),
            (.newEpisodes, true, true, Self.addNew),
        ] as [(RecordMode, Bool, Bool, Plan)])
    func eachModeDecides(mode: RecordMode, exists: Bool, upstream: Bool, plan: Plan) {
        #expect(CassettePlan.decide(mode: mode, cassetteExists: exists, hasUpstream: upstream) == .success(plan))
    }

    @Test func replayingNothingOrAddingWithoutAnUpstreamIsRefused() {
        #expect(
            CassettePlan.decide(mode: .none, cassetteExists: false, hasUpstream: true) == .failure(.nothingToReplay))
        #expect(
            CassettePlan.decide(mode: .newEpisodes, cassetteExists: true, hasUpstream: false)
                == .failure(.addingNeedsAnUpstream))
    }
}
