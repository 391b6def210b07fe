import Foundation
import HarnessTimeline

/// The device side of FakeAPNs: tokens handed to simulated devices, whether each is reachable, and
/// what happens to an accepted notification — delivered at once, held for coalescing, stored for an
/// offline device (only the newest per topic, until it expires), or discarded. Every decision is a
/// timeline event and is recorded in the ``NotificationLog``.
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

    /// A stored notification, its expiry, and the timer of its device and topic. The timer outlives
    /// replacements: a newer notification that expires no sooner keeps it, and it sleeps again when it
    /// wakes before the newest one's time. A push per request to an offline device then costs no task.
    struct Stored {
        var notification: AcceptedNotification
        var expiresAt: Date
        var timer: Task<Void, Never>
        var timerFiresAt: Date
    }

    private let devices = LockedState<[String: Device]>([:])
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
        devices.withLock {
            $0[token] = Device(
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
        devices.withLock { devices in devices.index(forKey: token).map { devices.values[$0].record } }
    }

    public func topic(of token: String) -> String? { device(token)?.topic }

    public func isOnline(_ token: String) -> Bool { devices.withLock { $0[token]?.online ?? false } }

    /// The app was removed: later pushes get `410 Unregistered` with this time.
    @discardableResult
    public func unregister(_ token: String, at date: Date = Date()) -> Bool {
        let found = devices.withLock { devices -> Bool in
            guard devices[token] != nil else { return false }
            devices[token]?.record.unregisteredAt = date
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
        devices.withLock { devices in
            var listed: [(token: String, removedAt: Date)] = []
            for (token, device) in devices where !device.reportedToFeedback {
                guard let removedAt = device.record.unregisteredAt, device.record.environment == environment,
                    topics.contains(device.record.topic)
                else { continue }
                devices[token]?.reportedToFeedback = true
                listed.append((token, removedAt))
            }
            return listed.sorted { ($0.removedAt, $0.token) < ($1.removedAt, $1.token) }
        }
    }

    /// Takes a device off the network or brings it back; coming back delivers what was stored for it.
    @discardableResult
    public func setOnline(_ token: String, _ online: Bool) -> Bool {
        let stored: [AcceptedNotification]? = devices.withLock { devices in
            guard var device = devices[token] else { return nil }
            device.online = online
            var due: [AcceptedNotification] = []
            if online {
                for (_, entry) in device.stored.sorted(by: {
                    $0.value.notification.apnsId < $1.value.notification.apnsId
                }) {
                    entry.timer.cancel()
                    due.append(entry.notification)
                }
                device.stored.removeAll()
            }
            devices[token] = device
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
        let all = devices.withLock { devices in
            defer { devices.removeAll() }
            return Array(devices.values)
        }
        for device in all {
            for entry in device.stored.values { entry.timer.cancel() }
        }
    }

    /// What became of a notification, as its log entry says: `accepted` (held for coalescing),
    /// `delivered`, `stored`, `replaced`, `coalesced`, `expired` or `discarded`.
    struct Fate: Equatable {
        var decision: String
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
        let decision: Decision = devices.withLock { devices in
            // The device's fields read where they are, not a copy of the whole device (its tables, its closure).
            guard let index = devices.index(forKey: token) else { return .discard("no such device") }
            if devices.values[index].online {
                guard (notification.priority < 10), (policy.coalescingWindow > .zero) else {
                    return .deliver(devices.values[index].deliver)
                }
                let previous = devices[token]?.coalescing.updateValue(notification, forKey: notification.topic)
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
            let previous = devices[token]?.stored[topic]
            var timer = previous?.timer
            var firesAt = previous?.timerFiresAt ?? expiresAt
            if timer == nil || firesAt > expiresAt {
                timer?.cancel()
                timer = expiryTimer(token: token, topic: topic, at: expiresAt)
                firesAt = expiresAt
            }
            devices[token]?.stored[topic] = Stored(
                notification: notification, expiresAt: expiresAt, timer: timer!, timerFiresAt: firesAt)
            return .store(replacing: previous?.notification)
        }
        switch decision {
        case .deliver(let deliver):
            return hand(notification, to: deliver, wasStored: false, at: now, as: push)
        case .coalesce(let previous):
            if let previous {
                log(previous, record(previous, "apns.coalesced", ["replacedBy": notification.apnsId]))
            } else {
                scheduleCoalescedDelivery(token: token, topic: notification.topic)
            }
            return Fate(decision: "accepted")
        case .store(let previous):
            if let previous { log(previous, record(previous, "apns.replaced", ["replacedBy": notification.apnsId])) }
            return record(
                notification, .apnsStored, ["reason": "device offline", "collapseId": notification.collapseId ?? ""])
        case .discard(let reason):
            return record(notification, "apns.discarded", ["reason": reason])
        }
    }

    private func scheduleCoalescedDelivery(token: String, topic: String) {
        let window = policy.coalescingWindow
        Task { [weak self] in
            try? await Task.sleep(for: window)
            guard let self else { return }
            let due = self.devices.withLock { $0[token]?.coalescing.removeValue(forKey: topic) }
            if let due { self.send(due, wasStored: false) }
        }
    }

    /// Sleeps until `date`, then expires what is stored for the device and topic if its time has come,
    /// or sleeps again until the newer notification's time.
    private func expiryTimer(token: String, topic: String, at date: Date) -> Task<Void, Never> {
        Task { [weak self] in
            var wake = date
            while true {
                guard let clock = self?.clock else { return }
                await clock.sleep(until: wake)
                guard !Task.isCancelled, let self else { return }
                guard let later = self.expireIfDue(token: token, topic: topic) else { return }
                wake = later
            }
        }
    }

    /// Expires the stored notification if it is due; returns when to look again if it is not.
    private func expireIfDue(token: String, topic: String) -> Date? {
        let now = clock.now
        enum Check {
            case expired(AcceptedNotification)
            case later(Date)
            case gone
        }
        let check = devices.withLock { devices -> Check in
            guard let entry = devices[token]?.stored[topic] else { return .gone }
            guard entry.expiresAt <= now else {
                devices[token]?.stored[topic]?.timerFiresAt = entry.expiresAt
                return .later(entry.expiresAt)
            }
            devices[token]?.stored[topic] = nil
            return .expired(entry.notification)
        }
        switch check {
        case .expired(let notification):
            log(
                notification,
                record(notification, "apns.expired", ["reason": "apns-expiration passed while the device was offline"]))
            return nil
        case .later(let date):
            return date
        case .gone:
            return nil
        }
    }

    /// Delivers a notification whose log entry already exists (it was held or stored).
    private func send(_ notification: AcceptedNotification, wasStored: Bool) {
        let deliver = devices.withLock { devices -> Deliver? in
            guard let device = devices[notification.deviceToken], device.online else { return nil }
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
            return record(notification, .apnsStored, ["reason": "no device attached"])
        }
        let push = push ?? delivery(of: notification)
        timeline.publish(.apnsDelivered, source: "apns", push.attributes(wasStored ? .deliveredFromStore : .delivered))
        deliver(notification)
        return Fate(decision: "delivered", deliveredAt: now)
    }

    /// A held or stored notification as its delivery's event reads it: the event reads no payload, so
    /// the object keeps none, and the timeline's budget counts all that it keeps (the device is handed
    /// the notification itself).
    private func delivery(of notification: AcceptedNotification) -> AcceptedPush {
        var bare = notification
        bare.payload = ""
        return AcceptedPush(bare, environment: "")
    }

    /// Publishes a decision and returns it as the notification's fate.
    private func record(
        _ notification: AcceptedNotification, _ kind: EventKind, _ attributes: consuming EventAttributes
    ) -> Fate {
        // Added to the caller's own attributes, not merged into a copy of them.
        attributes.merge(["apnsId": notification.apnsId, "deviceToken": notification.deviceToken])
        if let name = notification.device { attributes.merge(["device": name]) }
        timeline.publish(kind, source: "apns", attributes)
        return Fate(decision: String(kind.rawValue.dropFirst("apns.".count)))
    }

    private func log(_ notification: AcceptedNotification, _ fate: Fate) {
        log.update(notification.apnsId, to: fate)
    }
}
