import Foundation
import HarnessTimeline
import Toxics

/// What the push channel does with each push APNs hands over, decided as a value: the condition of
/// the `apns-device` link and seeded draws in, the push's fate out. The channel does the waiting.
///
/// A push is dropped with the link's drop chance. One that gets through waits the profile's downlink
/// delay and the time its bytes take at the downlink's bandwidth, a retransmission wait for each time
/// the profile's loss takes it (TCP keeps the connection, so loss delays rather than drops), the link's
/// own delay; with the duplicate chance a second copy follows it. The channel keeps pushes in order
/// (one TCP connection), so a push never arrives before one handed over earlier, except by a random
/// part of the reorder window drawn for each push. A link that is down, or loses everything, is not
/// asked: APNs keeps the push for the device.
public struct PushLinkRule: Sendable {
    public enum Fate: Sendable, Equatable {
        /// Handed to the device `after` this long (and no sooner than the push before it), `copies`
        /// times (two when duplicated), each then a further `reorder` late, out of the link's order.
        case deliver(after: Duration, copies: Int, reorder: Duration)
        /// Lost on the way; `why` says to what.
        case dropped(why: String)
    }

    private var random: SplitMix64

    public init(seed: UInt64) { random = SplitMix64(seed: seed) }

    /// The fate of a push of `bytes` bytes under `condition` (its size is worked out only when a
    /// profile's bandwidth needs it).
    public mutating func fate(ofPushOf bytes: @autoclosure () -> Int, under condition: LinkCondition) -> Fate {
        let faults = condition.push
        if faults.dropPerMillion > 0, Int64(random.below(1_000_000)) < faults.dropPerMillion {
            return .dropped(why: "the link drops \(Percent(faults.dropPerMillion)) of pushes")
        }
        var delay = Duration.zero
        if let profile = condition.profile {
            delay += profile.pushDelay(bytes: profile.down.bitsPerSecond == nil ? 0 : bytes())
            let losses = random.losses(perMillion: profile.down.lossPerMillion)
            delay += Retransmission.wait(losses: losses, first: .milliseconds(200))
        }
        switch faults.delay {
        case .fixed(let fixed): delay += fixed
        case .uniform(let low, let high): delay += low + (high - low) * random.unit()
        case .exponential(let mean): delay += min(mean * -log(1 - random.unit()), .seconds(86_400))
        case nil: break
        }
        let reorder = faults.reorderWindow > .zero ? faults.reorderWindow * random.unit() : .zero
        let twice = faults.duplicatePerMillion > 0 && Int64(random.below(1_000_000)) < faults.duplicatePerMillion
        return .deliver(after: delay, copies: twice ? 2 : 1, reorder: reorder)
    }
}
