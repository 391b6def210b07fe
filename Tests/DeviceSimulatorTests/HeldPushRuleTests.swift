import DeviceSimulator
import Testing

/// ios.md P7–P9 (the held push) and P13–P14 (the completion handler's 30 s), one test per row.
@Suite struct HeldPushRuleTests {
    @Test func p7ANewerHeldPushDiscardsTheOlder() {
        guard case .discard(let why) = HeldPushRule.action(on: .newerPushHeld) else {
            Issue.record("the older push must be discarded")
            return
        }
        #expect(why.contains("only the newest held push is kept"))
    }

    @Test func p8OpeningTheAppDeliversTheHeldPushAtOnce() {
        #expect(HeldPushRule.action(on: .userOpenedApp) == .deliverInForeground)
    }

    @Test func p9KillingOrForceQuittingTheAppDropsIt() {
        for cause: NotRunningCause in [.forceQuit, .systemTerminated, .crashed, .watchdog] {
            guard case .discard(let why) = HeldPushRule.action(on: .appTerminated(cause)) else {
                Issue.record("a held push is dropped when the app ends (\(cause))")
                continue
            }
            #expect(why.contains(cause.rawValue))
        }
    }

    @Test func p10TheBudgetLettingAWakeThroughDecidesAgain() {
        #expect(HeldPushRule.action(on: .budgetAllowsWake) == .decideAgain)
    }
}

@Suite struct CompletionHandlerRuleTests {
    let budget = Duration.seconds(30)

    @Test func p13CallingTheHandlerLetsTheAppBeSuspended() {
        #expect(CompletionHandlerRule.outcome(called: true, elapsed: .seconds(3), budget: budget) == .suspendWhenIdle)
    }

    @Test func p14NotCallingItWithinTheBudgetIsAWatchdogKill() {
        #expect(CompletionHandlerRule.outcome(called: false, elapsed: .seconds(29), budget: budget) == .keepRunning)
        #expect(CompletionHandlerRule.outcome(called: false, elapsed: .seconds(30), budget: budget) == .watchdogKill)
    }

    @Test func p1OnScreenTheClockDoesNotRun() {
        #expect(CompletionHandlerRule.outcome(called: false, elapsed: nil, budget: budget) == .keepRunning)
    }
}
