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

    func perform(_ step: Step) async throws {
        switch step {
        case .launch(let app):
            do {
                try await services.device.launch(bundleId(app))
            } catch let error as DeviceError {
                throw StepFailure(message: error.description)
            }
        case .home(let app):
            try await deviceAction { try await services.device.pressHome(bundleId(app)) }
        case .foreground(let app):
            try await deviceAction { try await services.device.bringToForeground(bundleId(app)) }
        case .crash(let app):
            try await deviceAction { try await services.device.crash(bundleId(app)) }
        case .jetsam(let app):
            try await deviceAction { try await services.device.terminateBySystem(bundleId(app)) }
        case .forceQuit(let app):
            try await deviceAction { try await services.device.forceQuit(bundleId(app)) }
        case .tap(let app, let button):
            try await deviceAction { try await services.device.tap(bundleId(app), button: button) }
        case .uninstall(let app):
            try await deviceAction { try await services.device.uninstall(bundleId(app)) }
        case .tapNotification(let app):
            try await deviceAction { try await services.device.tapNotification(bundleId(app)) }
        case .lock:
            await services.device.lock()
        case .unlock:
            try await deviceAction { try await services.device.unlock() }
        case .reboot:
            await services.device.reboot()
        case .backgroundFetch(let app):
            try await deviceAction { try await services.device.backgroundFetch(bundleId(app)) }
        case .waitFor(let pattern, let timeout):
            do {
                let digest = digest
                _ = try await timeline.waitFor(pattern.description, timeout: timeout) { event in
                    pattern.matches(event, fixtureDigest: digest)
                }
            } catch let timeout as TimelineWaitTimeout {
                throw StepFailure(message: "waitFor: \(timeout.message)")
            }
        case .push(let body):
            try await sendPush(body)
        case .network(let network):
            try await deviceAction { try await services.device.setNetwork(network) }
        case .conditions(let change):
            do {
                try await services.network.change(change)
            } catch let error as NetworkLinkError {
                throw StepFailure(message: error.description)
            }
        }
    }

    private func bundleId(_ app: String) -> String { configuration.apps[app]?.bundleId ?? app }

    private func deviceAction(_ action: () async throws -> Void) async throws {
        do {
            try await action()
        } catch let error as DeviceError {
            throw StepFailure(message: error.description)
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
