import Foundation
import HarnessTimeline

/// What a transfer task needs of the device's network (docs/ios-rules.md U2, U8): any connection, or Wi-Fi for
/// a discretionary task or one whose session does not allow cellular access.
struct NetworkRequirements: Sendable, Equatable {
    /// `isDiscretionary`, set by the session or forced on tasks created in the background: the system
    /// waits for good conditions, which here means Wi-Fi.
    var discretionary: Bool
    /// `allowsCellularAccess` of the session.
    var allowsCellularAccess: Bool

    /// Why the task cannot use `network` (`wifi`, `cellular` or `offline`); nil when it can.
    func whyNot(on network: String) -> String? {
        switch network {
        case "wifi":
            return nil
        case "cellular":
            if discretionary { return "a discretionary task waits for Wi-Fi" }
            if !allowsCellularAccess {
                return "the session does not allow cellular access (allowsCellularAccess is false)"
            }
            return nil
        default:
            return "the device has no network; background tasks wait for connectivity"
        }
    }
}

/// The device's network as transfer tasks see it: they wait here until they may use it, and learn
/// when it goes away under them.
final class NetworkGate: Sendable {
    private struct Waiter {
        var requirements: NetworkRequirements
        /// Resumed when the network starts (`true`) or stops (`false`) suiting the requirements.
        var whenAllowed: Bool
        var continuation: CheckedContinuation<Void, Never>
    }

    private let state = LockedState<(network: String, waiters: [UUID: Waiter])>(("wifi", [:]))

    var network: String { state.withLock { $0.network } }

    func set(_ network: String) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.network = network
            let ready = state.waiters.filter {
                ($0.value.requirements.whyNot(on: network) == nil) == $0.value.whenAllowed
            }
            for id in ready.keys { state.waiters[id] = nil }
            return ready.values.map(\.continuation)
        }
        for continuation in ready { continuation.resume() }
    }

    /// Returns once the network suits `requirements` (at once if it does), or when cancelled.
    func waitUntilAllowed(_ requirements: NetworkRequirements) async {
        await wait(requirements, untilAllowed: true)
    }

    /// Returns once the network stops suiting `requirements`, or when cancelled.
    func waitUntilDisallowed(_ requirements: NetworkRequirements) async {
        await wait(requirements, untilAllowed: false)
    }

    private func wait(_ requirements: NetworkRequirements, untilAllowed: Bool) async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let done = state.withLock { state -> Bool in
                    if (requirements.whyNot(on: state.network) == nil) == untilAllowed || Task.isCancelled {
                        return true
                    }
                    state.waiters[id] = Waiter(
                        requirements: requirements, whenAllowed: untilAllowed, continuation: continuation)
                    return false
                }
                if done { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume()
        }
    }
}
