import Foundation
import Testing

@testable import HarnessCore

/// A run's teardown always ends: a part that will not stop is left behind after its limit, not waited
/// for forever.
@Suite struct TeardownTests {
    @Test func workThatFinishesIsWaitedFor() async {
        let finished = await ServiceStack.finishes({ await Task.yield() }, within: .seconds(600))
        #expect(finished)
    }

    @Test func workThatNeverFinishesIsLeftAfterTheLimit() async {
        // An await nothing will ever resume, like a stop that hangs.
        let never: @Sendable () async -> Void = {
            await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in }
        }
        let finished = await ServiceStack.finishes(never, within: .milliseconds(100))
        #expect(!finished)
    }
}
