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

    private func forward(_ event: TransferDaemon.Event, to bundleId: String) async {
        let connection = apps[bundleId]?.connection
        switch event {
        case .progress(let params):
            await connection?.notify(DeviceMethod.didWriteData, params)
        case .finished(let params):
            guard let connection else { return }
            // The temporary file lives only while the delegate method runs: wait for the app's answer.
            _ = try? await connection.request(DeviceMethod.didFinishDownloadingTo, params, timeout: .seconds(10))
        case .completed(let params):
            guard let message = try? RPCMessage.notification(DeviceMethod.didCompleteWithError, params) else { return }
            if let connection {
                await connection.send(message)
            } else {
                apps[bundleId]?.heldTransferEvents.append(message)
            }
        }
    }
}
