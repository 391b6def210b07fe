import AsyncHTTPClient
import Foundation
import NIOCore
import Recording

/// Sends a push through the running FakeParse as a backend would: `POST /parse/push` with the master key.
enum PushClient {
    static func send(_ body: Data, to services: ServiceStack) async throws {
        let parse = services.parse.configuration
        var request = HTTPClientRequest(url: services.routes.backendParse + "/push")
        request.method = .POST
        request.headers.add(name: "X-Parse-Application-Id", value: parse.applicationId)
        request.headers.add(name: "X-Parse-Master-Key", value: parse.masterKey)
        request.headers.add(name: "Content-Type", value: "application/json")
        // Recorded, the harness's own push is told from a backend's by this.
        request.headers.add(name: "User-Agent", value: BackendScript.harnessUserAgent)
        request.body = .bytes(ByteBuffer(bytes: body))
        let response: HTTPClientResponse
        let answer: ByteBuffer
        do {
            response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            answer = try await response.body.collect(upTo: 1 << 20)
        } catch {
            throw StepFailure.parseUnreachable(url: "\(services.routes.backendParse)", error: "\(error)")
        }
        guard response.status.code == 200 else {
            throw StepFailure.parseRefused(status: response.status.code, body: String(buffer: answer))
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
