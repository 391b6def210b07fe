import DeviceProtocol
import Foundation
import HarnessTimeline

/// Background sessions: the app asks, the ``TransferDaemon`` downloads, the device forwards the events.
extension DeviceSimulator {
    func resumeDownload(_ bundleId: String, _ params: DownloadTaskParams) async throws {
        let file = try record(bundleId).container.temporaryDownloadURL()
        try await transferDaemon.resume(bundleId: bundleId, params: params, temporaryFile: file) { event in
            await self.forward(event, to: bundleId)
        }
    }

    /// Hands a transfer event to the app. Never waits on the socket, except for the finished file,
    /// which lives only until the app has answered (or is gone).
    private func forward(_ event: TransferDaemon.Event, to bundleId: String) async -> Bool {
        let connection = apps[bundleId]?.connection
        switch event {
        case .progress(let params):
            connection?.notify(DeviceMethod.didWriteData, params)
            return connection != nil
        case .finished(let params):
            guard let connection else { return false }
            do {
                _ = try await connection.request(DeviceMethod.didFinishDownloadingTo, params)
                return true
            } catch {
                return false
            }
        case .completed(let params):
            guard let message = try? RPCMessage.notification(DeviceMethod.didCompleteWithError, params) else {
                return false
            }
            if let connection {
                connection.send(message)
            } else {
                apps[bundleId]?.heldTransferEvents.append(message)
            }
            return true
        }
    }
}
