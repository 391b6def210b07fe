import DeviceSimulator
import Testing

/// ios.md U9: 60 → 120 → 240 s, reset by the foreground or by a delay that passes without a wake.
@Suite struct ResumeRateLimiterTests {
    @Test func eachBackgroundWakeDoublesTheDelay() {
        var limiter = ResumeRateLimiter()
        #expect(limiter.startOfTaskCreated(at: .seconds(5)) == nil, "no wake yet, no delay")
        limiter.wake(at: .seconds(10))
        #expect(limiter.currentDelay == .seconds(60))
        #expect(limiter.startOfTaskCreated(at: .seconds(20)) == .seconds(70))
        limiter.wake(at: .seconds(30))
        #expect(limiter.currentDelay == .seconds(120))
        limiter.wake(at: .seconds(40))
        #expect(limiter.currentDelay == .seconds(240))
        #expect(limiter.startOfTaskCreated(at: .seconds(280)) == nil, "the delay has passed")
    }

    @Test func theForegroundOrAQuietDelayResetsIt() {
        var limiter = ResumeRateLimiter()
        limiter.wake(at: .zero)
        limiter.wake(at: .seconds(1))
        limiter.reset()
        #expect(limiter.startOfTaskCreated(at: .seconds(2)) == nil)
        limiter.wake(at: .seconds(3))
        #expect(limiter.currentDelay == .seconds(60))
        limiter.wake(at: .seconds(100))
        #expect(limiter.currentDelay == .seconds(60), "60 s passed without a wake: back to the start")
    }

    @Test func zeroTurnsItOff() {
        var limiter = ResumeRateLimiter(initialDelay: .zero)
        limiter.wake(at: .zero)
        #expect(limiter.startOfTaskCreated(at: .seconds(1)) == nil)
    }

    /// A storm of wakes cannot double the delay past a day (it once overflowed a Duration).
    @Test func doublingStopsAtADay() {
        var limiter = ResumeRateLimiter(initialDelay: .seconds(60))
        var now = Duration.zero
        for _ in 0..<200 {
            limiter.wake(at: now)
            now += .seconds(1)
        }
        #expect(limiter.startOfTaskCreated(at: now) == now - .seconds(1) + .seconds(86_400))
    }
}
