import Foundation
import HarnessTimeline

/// The device side of FakeAPNs: tokens handed to simulated devices, whether each is reachable, and
/// what happens to an accepted notification — delivered at once, held for coalescing, stored for an
/// offline device (only the newest per topic, until it expires), or discarded. Every decision is a
/// timeline event and is recorded in the ``NotificationLog``.
///
/// Its timers (expiries, coalescing windows) are deadlines in one value, ``GatewayTimers``, and one
/// loop, ``run()``, carries them out: FakeAPNs's `run()` runs it as a child task.
public final class DeviceGateway: Sendable {
    /// Receives a device's notifications, in the order the gateway decides to deliver them. It is called
    /// on the thread that made the decision (often an event loop), so it must return at once: a device
    /// that does real work hands the notification on to a task of its own.
    public typealias Deliver = @Sendable (AcceptedNotification) -> Void

    struct Device {
        var record: DeviceRecord
        var online: Bool
        var deliver: Deliver?
        /// The newest undelivered notification per topic.
        var stored: [String: Stored] = [:]
        /// Notifications held for the coalescing window, per topic.
        var coalescing: [String: AcceptedNotification] = [:]
        /// The feedback service has listed this removed app's token (its list is cleared once read).
        var reportedToFeedback = false
    }

    /// A stored notification and when it expires (its deadline in ``GatewayTimers``).
    struct Stored {
        var notification: AcceptedNotification
        var expiresAt: Date
    }

    struct State {
        var devices: [String: Device] = [:]
        var timers = GatewayTimers()
        /// The timer loop, waiting to be woken by a sooner deadline; or a wake that came while it was not.
        var waiter: CheckedContinuation<Void, Never>?
        var woken = false
    }

    private let state = LockedState(State())
    private let timeline: Timeline
    private let log: NotificationLog
    private let policy: DeliveryPolicy
    private let clock: any ExpiryClock

    init(timeline: Timeline, log: NotificationLog, policy: DeliveryPolicy, clock: any ExpiryClock = WallClock()) {
        self.timeline = timeline
        self.log = log
        self.policy = policy
        self.clock = clock
    }

    /// Registers a device for `topic` and returns its new token (32 random bytes, lowercase hex). A
    /// device with a `deliver` closure is online; one without can only be inspected.
    /// - Parameter device: the device's name, when it has one, for the events about its token.
    public func register(
        topic: String, environment: String = "sandbox", device: String? = nil, deliver: Deliver? = nil
    ) -> String {
        let token = Hex.lowercase((0..<32).map { _ in UInt8.random(in: 0...255) })
        state.withLock {
            $0.devices[token] = Device(
                record: DeviceRecord(topic: topic, environment: environment, device: device), online: deliver != nil,
                deliver: deliver)
        }
        // Every `apns.*` event about a named device's token names it too: a push carries the name from its
        // validation on (``AcceptedNotification/device``), the device's own events read it here.
        var attributes: EventAttributes = ["deviceToken": token, "topic": topic, "environment": environment]
        if let device { attributes.merge(["device": device]) }
        timeline.publish(.apnsDeviceRegistered, source: "apns", attributes)
        return token
    }

    /// The name the device of `token` registered with; nil for a device without one.
    public func deviceName(of token: String) -> String? { device(token)?.device }

    /// `attributes` about `token`, with its device's name when it has one.
    private func naming(_ token: String, _ attributes: EventAttributes) -> EventAttributes {
        guard let name = deviceName(of: token) else { return attributes }
        var named = attributes
        named.merge(["device": name])
        return named
    }

    public func device(_ token: String) -> DeviceRecord? {
        // The record read where it is, not a copy of the whole device (its tables, its closure).
        state.withLock { state in state.devices.index(forKey: token).map { state.devices.values[$0].record } }
    }

    public func topic(of token: String) -> String? { device(token)?.topic }

    public func isOnline(_ token: String) -> Bool { state.withLock { $0.devices[token]?.online ?? false } }

    /// The app was removed: later pushes get `410 Unregistered` with this time.
    @discardableResult
    public func unregister(_ token: String, at date: Date = Date()) -> Bool {
        let found = state.withLock { state -> Bool in
            guard state.devices[token] != nil else { return false }
            state.devices[token]?.record.unregisteredAt = date
            return true
        }
        if found {
            timeline.publish(
                "apns.device.unregistered", source: "apns",
                naming(token, ["deviceToken": token, "timestamp": "\(Int64(date.timeIntervalSince1970 * 1000))"]))
        }
        return found
    }

    /// The feedback service's list for a push certificate: the tokens of removed apps on its topics and
    /// environment, each with when APNs learned the app was gone, oldest first. Taken: Apple clears the
    /// list once it is read, so the next read lists only apps removed since.
    func takeFeedback(topics: Set<String>, environment: String) -> [(token: String, removedAt: Date)] {
        state.withLock { state in
            var listed: [(token: String, removedAt: Date)] = []
            for (token, device) in state.devices where !device.reportedToFeedback {
                guard let removedAt = device.record.unregisteredAt, device.record.environment == environment,
                    topics.contains(device.record.topic)
                else { continue }
                state.devices[token]?.reportedToFeedback = true
                listed.append((token, removedAt))
            }
            return listed.sorted { ($0.removedAt, $0.token) < ($1.removedAt, $1.token) }
        }
    }

    /// Takes a device off the network or brings it back; coming back delivers what was stored for it.
    @discardableResult
    public func setOnline(_ token: String, _ online: Bool) -> Bool {
        let stored: [AcceptedNotification]? = state.withLock { state in
            guard var device = state.devices[token] else { return nil }
            device.online = online
            var due: [AcceptedNotification] = []
            if online {
                for (_, entry) in device.stored.sorted(by: {
                    $0.value.notification.apnsId < $1.value.notification.apnsId
                }) {
                    due.append(entry.notification)
                }
                device.stored.removeAll()
                state.timers.cancelAll(token: token, purpose: .expiry)
            }
            state.devices[token] = device
            return due
        }
        guard let stored else { return false }
        timeline.publish(
            online ? "apns.device.online" : "apns.device.offline", source: "apns", naming(token, ["deviceToken": token])
        )
        for notification in stored { send(notification, wasStored: true) }
        return true
    }

    /// Forgets every device and everything stored.
    func reset() {
        state.withLock { state in
            state.devices.removeAll()
            state.timers.removeAll()
        }
    }

    /// What became of a notification, as its log entry says.
    struct Fate: Equatable {
        enum Decision: String, Sendable {
            /// Accepted and held for coalescing (or, in the log, not yet decided on).
            case accepted
            /// Refused by the provider API (the log's word; the gateway never sees it).
            case rejected
            case delivered, stored, replaced, coalesced, expired, discarded
        }

        var decision: Decision
        var deliveredAt: Date?
    }

    /// Decides what happens to a notification APNs just accepted, and returns the decision for its log
    /// entry; later decisions about it (delivered from storage, expired, replaced) update the log.
    @discardableResult
    func accept(_ notification: AcceptedNotification) -> Fate {
        accept(AcceptedPush(notification, environment: ""), at: Date())
    }

    /// The same for a push whose `apns.request.accepted` was published from `push`, accepted at `now`
    /// (a push delivered at once is delivered then).
    func accept(_ push: AcceptedPush, at now: Date) -> Fate {
        let notification = push.notification
        enum Decision {
            case deliver(Deliver?)
            case coalesce(replacing: AcceptedNotification?)
            case store(replacing: AcceptedNotification?)
            case discard(String)
        }
        let token = notification.deviceToken
        var wake = false
        let decision: Decision = state.withLock { state in
            // The device's fields read where they are, not a copy of the whole device (its tables, its closure).
            guard let index = state.devices.index(forKey: token) else { return .discard("no such device") }
            if state.devices.values[index].online {
                guard (notification.priority < 10), (policy.coalescingWindow > .zero) else {
                    return .deliver(state.devices.values[index].deliver)
                }
                let previous = state.devices[token]?.coalescing.updateValue(notification, forKey: notification.topic)
                if previous == nil {
                    let ends = clock.now.addingTimeInterval(Self.seconds(policy.coalescingWindow))
                    wake = state.timers.set(
                        .init(token: token, topic: notification.topic, purpose: .coalescing), at: ends)
                }
                return .coalesce(replacing: previous)
            }
            if notification.expiration == 0 { return .discard("apns-expiration 0: one attempt, never stored") }
            // The clock is read only for a notification to store: delivering one does not need it.
            let now = clock.now
            let expiresAt =
                notification.expiration.map { Date(timeIntervalSince1970: TimeInterval($0)) }
                ?? now.addingTimeInterval(TimeInterval(policy.defaultStorage.components.seconds))
            guard expiresAt > now else { return .discard("apns-expiration already passed") }
            let topic = notification.topic
            let previous = state.devices[token]?.stored[topic]
            state.devices[token]?.stored[topic] = Stored(notification: notification, expiresAt: expiresAt)
            wake = state.timers.set(.init(token: token, topic: topic, purpose: .expiry), at: expiresAt)
            return .store(replacing: previous?.notification)
        }
        if wake { wakeTimerLoop() }
        switch decision {
        case .deliver(let deliver):
            return hand(notification, to: deliver, wasStored: false, at: now, as: push)
        case .coalesce(let previous):
            if let previous {
                log(previous, record(previous, .coalesced, "apns.coalesced", ["replacedBy": notification.apnsId]))
            }
            return Fate(decision: .accepted)
        case .store(let previous):
            if let previous {
                log(previous, record(previous, .replaced, "apns.replaced", ["replacedBy": notification.apnsId]))
            }
            return record(
                notification, .stored, .apnsStored,
                ["reason": "device offline", "collapseId": notification.collapseId ?? ""])
        case .discard(let reason):
            return record(notification, .discarded, "apns.discarded", ["reason": reason])
        }
    }

    /// `duration` in seconds, for a deadline.
    static func seconds(_ duration: Duration) -> TimeInterval {
        TimeInterval(duration.components.seconds) + TimeInterval(duration.components.attoseconds) / 1e18
    }

    /// Carries out every timer until cancelled: sleeps until the earliest deadline (or until a sooner
    /// one is set), then expires what is due to expire and delivers what was held for coalescing.
    public func run() async {
        while !Task.isCancelled {
            // What it sleeps until is read with every deadline set so far: a wake asked for before
            // this is answered by it.
            let next = state.withLock { state in
                state.woken = false
                return state.timers.sleeping()
            }
            await withTaskGroup(of: Void.self) { group in
                if let next { group.addTask { await self.clock.sleep(until: next) } }
                group.addTask { await self.woken() }
                await group.next()
                group.cancelAll()
            }
            if Task.isCancelled { return }
            let now = clock.now
            for key in state.withLock({ $0.timers.takeDue(at: now) }) {
                switch key.purpose {
                case .expiry: expire(token: key.token, topic: key.topic)
                case .coalescing:
                    let due = state.withLock { $0.devices[key.token]?.coalescing.removeValue(forKey: key.topic) }
                    if let due { send(due, wasStored: false) }
                }
            }
        }
    }

    /// Returns once ``wakeTimerLoop()`` is called (at once if it was while the loop was not waiting),
    /// or when cancelled.
    private func woken() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    if state.woken || Task.isCancelled {
                        state.woken = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }?.resume()
        }
    }

    /// A deadline sooner than the loop sleeps for was set: it looks again.
    private func wakeTimerLoop() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.woken = true
                return nil
            }
            state.waiter = nil
            return waiter
        }?.resume()
    }

    /// Expires the device and topic's stored notification.
    private func expire(token: String, topic: String) {
        let expired = state.withLock { $0.devices[token]?.stored.removeValue(forKey: topic) }
        guard let notification = expired?.notification else { return }
        log(
            notification,
            record(
                notification, .expired, "apns.expired",
                ["reason": "apns-expiration passed while the device was offline"]))
    }

    /// Delivers a notification whose log entry already exists (it was held or stored).
    private func send(_ notification: AcceptedNotification, wasStored: Bool) {
        let deliver = state.withLock { state -> Deliver? in
            guard let device = state.devices[notification.deviceToken], device.online else { return nil }
            return device.deliver
        }
        log(notification, hand(notification, to: deliver, wasStored: wasStored, at: Date()))
    }

    /// Hands `notification` to its device; its event reads `push` (made for the event alone when nil).
    private func hand(
        _ notification: AcceptedNotification, to deliver: Deliver?, wasStored: Bool, at now: Date,
        as push: AcceptedPush? = nil
    ) -> Fate {
        guard let deliver else {
            // Online only as an inspection record (no device attached): nothing can receive it.
            return record(notification, .stored, .apnsStored, ["reason": "no device attached"])
        }
        let push = push ?? delivery(of: notification)
        timeline.publish(.apnsDelivered, source: "apns", push.attributes(wasStored ? .deliveredFromStore : .delivered))
        deliver(notification)
        return Fate(decision: .delivered, deliveredAt: now)
    }

    /// A held or stored notification as its delivery's event reads it: the event reads no payload, so
    /// the object keeps none, and the timeline's budget counts all that it keeps (the device is handed
    /// the notification itself).
    private func delivery(of notification: AcceptedNotification) -> AcceptedPush {
        var bare = notification
        bare.payload = ""
        return AcceptedPush(bare, environment: "")
    }

    /// Publishes a decision as its event and returns it as the notification's fate.
    private func record(
        _ notification: AcceptedNotification, _ decision: Fate.Decision, _ kind: EventKind,
        _ attributes: consuming EventAttributes
    ) -> Fate {
        // Added to the caller's own attributes, not merged into a copy of them.
        attributes.merge(["apnsId": notification.apnsId, "deviceToken": notification.deviceToken])
        if let name = notification.device { attributes.merge(["device": name]) }
        timeline.publish(kind, source: "apns", attributes)
        return Fate(decision: decision)
    }

    private func log(_ notification: AcceptedNotification, _ fate: Fate) {
        log.update(notification.apnsId, to: fate)
    }
}
