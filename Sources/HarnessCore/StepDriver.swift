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

/// Sends a push through the running FakeParse as a backend would: `POST /parse/push` with the master key.
enum PushClient {
    static func send(_ body: Data, to services: ServiceStack) async throws {
        let parse = services.parse.configuration
        var request = HTTPClientRequest(url: services.parse.url + "/push")
        request.method = .POST
        request.headers.add(name: "X-Parse-Application-Id", value: parse.applicationId)
        request.headers.add(name: "X-Parse-Master-Key", value: parse.masterKey)
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body))
        let response: HTTPClientResponse
        let answer: ByteBuffer
        do {
            response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            answer = try await response.body.collect(upTo: 1 << 20)
        } catch {
            throw StepFailure(message: "cannot reach Parse at \(services.parse.url)/push: \(error)")
        }
        guard response.status.code == 200 else {
            throw StepFailure(
                message: "Parse refused the push: \(response.status.code) \(String(buffer: answer))")
        }
    }
}

extension ServiceStack {
    /// Sends a cassette's recorded pushes through the running Parse, each when it is due, as the
    /// backend that sent them did; says what it did through `output`. A push Parse refuses is reported
    /// and the next one still goes. Returns when every push has gone, or when cancelled.
    public func replayPushes(_ schedule: PushSchedule, output: @Sendable (String) -> Void) async {
        let total = schedule.recorded.pushes.count
        output("replaying \(total) recorded push\(total == 1 ? "" : "es")")
        while let (push, due) = schedule.take() {
            do {
                try await Task.sleep(until: due, clock: .continuous)
            } catch {
                return
            }
            let number = schedule.taken
            let at = String(format: "%.1f s", push.offset / 1000)
            if let names = push.namedDevice {
                output(
                    "note: replayed push \(number) names a device by its \(names) from the recording; "
                        + "a device registered now has a new one, so the push may reach nobody")
            }
            do {
                try await PushClient.send(push.body, to: self)
                output("replayed push \(number) of \(total) (recorded at \(at), entry \(push.entry) of traffic.har)")
            } catch let failure as StepFailure {
                output("replayed push \(number) of \(total) failed: \(failure.message)")
            } catch {
                output("replayed push \(number) of \(total) failed: \(error)")
            }
        }
    }
}
