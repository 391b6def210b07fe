import Testing

@testable import DeviceSimulator

/// ios.md P10 and P11: the settings and budget that hold background pushes.
@Suite struct WakeBudgetTests {
    @Test func permissiveByDefault() {
        var budget = WakeBudget(policy: PushPolicy())
        for minute in 0..<100 {
            #expect(budget.verdict(at: .seconds(minute * 60)) == .allowed)
            budget.record(at: .seconds(minute * 60))
        }
    }

    @Test func p11BackgroundAppRefreshOffOrLowPowerModeHoldsEveryWake() {
        var off = PushPolicy()
        off.backgroundAppRefresh = false
        #expect(
            WakeBudget(policy: off).verdict(at: .zero) == .held(reason: "Background App Refresh is off", until: nil))
        var lowPower = PushPolicy()
        lowPower.lowPowerMode = true
        guard case .held(let reason, nil) = WakeBudget(policy: lowPower).verdict(at: .zero) else {
            Issue.record("Low Power Mode must hold the wake")
            return
        }
        #expect(reason.contains("Low Power Mode"))
    }

    @Test func p10AnHourlyAllowanceHoldsTheNextWakeUntilTheOldestLeavesTheHour() {
        var policy = PushPolicy()
        policy.wakesPerHour = 3
        var budget = WakeBudget(policy: policy)
        for minute in [0, 10, 20] {
            #expect(budget.verdict(at: .seconds(minute * 60)) == .allowed)
            budget.record(at: .seconds(minute * 60))
        }
        guard case .held(let reason, let until) = budget.verdict(at: .seconds(30 * 60)) else {
            Issue.record("the fourth wake within the hour must be held")
            return
        }
        #expect(reason.contains("3 background wakes in the last hour"))
        #expect(until == .seconds(3600), "when the first wake leaves the hour")
        #expect(budget.verdict(at: .seconds(3601)) == .allowed)
    }

    @Test func p10ADailyBudgetResets24HoursAfterItBegan() {
        var policy = PushPolicy()
        policy.wakesPerDay = 2
        var budget = WakeBudget(policy: policy)
        budget.record(at: .seconds(100))
        budget.record(at: .seconds(7200))
        guard case .held(_, let until) = budget.verdict(at: .seconds(10_000)) else {
            Issue.record("the third wake of the day must be held")
            return
        }
        #expect(until == .seconds(86_500))
        #expect(budget.verdict(at: .seconds(86_500)) == .allowed)
        budget.record(at: .seconds(86_500))
        #expect(budget.verdict(at: .seconds(86_501)) == .allowed, "a new day, one wake counted")
    }
}

@Suite struct PolicyClockTests {
    @Test func aScaledClockRunsPolicyTimeFaster() {
        let clock = PolicyClock(timeScale: 0.1, startedAt: .now - .seconds(2))
        #expect(clock.real(.seconds(30)) == .seconds(3))
        #expect(clock.now >= .seconds(20), "2 s of real time are 20 s of policy time")
        #expect(clock.now < .seconds(600))
    }

    @Test func realTimeByDefault() {
        #expect(PolicyClock().real(.seconds(30)) == .seconds(30))
    }
}

@Suite struct ZeroBudgetTests {
    @Test func aBudgetOfZeroHoldsEveryWakeForGood() {
        var hourly = PushPolicy()
        hourly.wakesPerHour = 0
        #expect(WakeBudget(policy: hourly).verdict(at: .zero) != .allowed)
        var daily = PushPolicy()
        daily.wakesPerDay = 0
        guard case .held(_, nil) = WakeBudget(policy: daily).verdict(at: .seconds(90_000)) else {
            Issue.record("a daily budget of 0 holds every wake, with no end")
            return
        }
    }
}
