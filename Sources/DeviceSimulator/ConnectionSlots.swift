import Foundation
import HarnessTimeline

/// `HTTPMaximumConnectionsPerHost`: how many of a session's tasks may talk to one host at a time; the
/// others wait their turn, first come first served.
final class ConnectionSlots: Sendable {
    private struct Slot {
        var inUse = 0
        /// Resumed with true when handed a slot, false when cancelled while waiting.
        var waiting: [(id: UUID, continuation: CheckedContinuation<Bool, Never>)] = []
    }

    private let slots = LockedState<[String: Slot]>([:])

    /// Whether all `limit` slots for `key` are in use right now.
    func isFull(_ key: String, limit: Int) -> Bool {
        slots.withLock { ($0[key]?.inUse ?? 0) >= limit }
    }

    /// Takes a slot for `key`, waiting while `limit` are in use. False when cancelled while waiting
    /// (then no slot is held).
    func acquire(_ key: String, limit: Int) async -> Bool {
        let id = UUID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let granted = slots.withLock { slots -> Bool in
                    if slots[key, default: Slot()].inUse < limit {
                        slots[key, default: Slot()].inUse += 1
                        return true
                    }
                    slots[key, default: Slot()].waiting.append((id, continuation))
                    return false
                }
                if granted { continuation.resume(returning: true) }
            }
        } onCancel: {
            let waiter = slots.withLock { slots -> CheckedContinuation<Bool, Never>? in
                guard let index = slots[key]?.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                return slots[key]?.waiting.remove(at: index).continuation
            }
            waiter?.resume(returning: false)
        }
    }

    /// Gives a slot back, handing it to the first waiter if any.
    func release(_ key: String) {
        let next = slots.withLock { slots -> CheckedContinuation<Bool, Never>? in
            guard var slot = slots[key] else { return nil }
            if !slot.waiting.isEmpty {
                // The slot passes on as it is: `inUse` stays.
                let next = slot.waiting.removeFirst()
                slots[key] = slot
                return next.continuation
            }
            slot.inUse -= 1
            slots[key] = slot.inUse == 0 ? nil : slot
            return nil
        }
        next?.resume(returning: true)
    }
}
