import AsyncHTTPClient
import DeviceSimulator
import Foundation
import HarnessTimeline
import NIOCore
import Recording

/// Carries out scenario steps against the running services, as a user or a backend would.
struct StepDriver {
    let configuration: HarnessConfiguration
    let services: ServiceStack
    let timeline: Timeline
    let digest: @Sendable (String) -> String?
    /// Replaying: the recorded pushes, which push steps send in place of their own, at their times.
    var pushes: PushSchedule?

    /// Carries out `step`; a step that names no device acts on the first (the only one of a scenario
    /// that declares none).
    func perform(_ step: Step) async throws {
        try await perform(step, on: services.devices[0])
    }

    private func perform(_ step: Step, on runDevice: RunDevice) async throws {
        let device = runDevice.simulator
        switch step {
        case .on(let name, let step):
            guard let named = services.devices.first(where: { $0.name == name }) else {
                throw StepFailure.noSuchDevice(name)
            }
            try await onDevice(named) { try await perform(step, on: named) }
        case .onEachDevice(let step):
            for each in services.devices { try await onDevice(each) { try await perform(step, on: each) } }
        case .launch(let app):
            try await deviceAction { try await device.launch(bundleId(app)) }
        case .home(let app):
            try await deviceAction { try await device.pressHome(bundleId(app)) }
        case .foreground(let app):
            try await deviceAction { try await device.bringToForeground(bundleId(app)) }
        case .crash(let app):
            try await deviceAction { try await device.crash(bundleId(app)) }
        case .jetsam(let app):
            try await deviceAction { try await device.terminateBySystem(bundleId(app)) }
        case .forceQuit(let app):
            try await deviceAction { try await device.forceQuit(bundleId(app)) }
        case .tap(let app, let button):
            try await deviceAction { try await device.tap(bundleId(app), button: button) }
        case .type(let app, let field, let text):
            try await deviceAction { try await device.type(bundleId(app), field: field, text: text) }
        case .uninstall(let app):
            try await deviceAction { try await device.uninstall(bundleId(app)) }
        case .tapNotification(let app):
            try await deviceAction { try await device.tapNotification(bundleId(app)) }
        case .lock:
            await device.lock()
        case .unlock:
            try await deviceAction { try await device.unlock() }
        case .reboot:
            await device.reboot()
        case .backgroundFetch(let app):
            try await deviceAction { try await device.backgroundFetch(bundleId(app)) }
        case .waitFor(let pattern, let count, let timeout):
            do {
                let digest = digest
                // The stream starts with every event already published: past matches count too.
                let seen = LockedState(0)
                let described = count == 1 ? pattern.description : "\(count) × \(pattern)"
                _ = try await timeline.waitFor(described, timeout: timeout) { event in
                    guard pattern.matches(event, fixtureDigest: digest) else { return false }
                    return seen.withLock {
                        $0 += 1
                        return $0 >= count
                    }
                }
            } catch let timeout as TimelineWaitTimeout {
                let seen = timeline.events.filter { pattern.matches($0, fixtureDigest: digest) }.count
                throw StepFailure.waitTimedOut(timeout, count: count, seen: seen)
            }
        case .push(let body):
            try await sendPush(body)
        case .network(let network):
            try await deviceAction { try await device.setNetwork(network) }
        case .conditions(let change):
            do {
                try await services.network.change(change)
            } catch let error as NetworkLinkError {
                throw StepFailure.network(error)
            }
        }
    }

    /// Runs a step on a named device: its failure says which device.
    private func onDevice(_ device: RunDevice, _ step: () async throws -> Void) async throws {
        do {
            try await step()
        } catch let failure as StepFailure {
            guard let name = device.name else { throw failure }
            throw StepFailure.onDevice(name, failure)
        }
    }

    private func bundleId(_ app: String) -> String { configuration.apps[app]?.bundleId ?? app }

    private func deviceAction(_ action: () async throws -> Void) async throws {
        do {
            try await action()
        } catch let error as DeviceError {
            throw StepFailure.device(error)
        }
    }

    /// `POST /parse/push` with the master key, as a backend would. Replaying, the step sends the next
    /// recorded push instead, no sooner than it was sent in the recording; once the recorded ones are
    /// used up, its own.
    private func sendPush(_ body: JSONBox) async throws {
        if let (recorded, due) = pushes?.take() {
            try await Task.sleep(until: due, clock: .continuous)
            try await PushClient.send(recorded.body, to: services)
        } else {
            try await PushClient.send(body.data, to: services)
        }
    }
}
