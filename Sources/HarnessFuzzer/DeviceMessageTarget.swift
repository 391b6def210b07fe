import DeviceProtocol
import Foundation

/// A line on the device socket: read as JSON-RPC, then its params as every method's params type, and
/// resume data as the device decodes it.
enum DeviceMessageTarget {
    static func run(_ bytes: [UInt8]) {
        guard case .success(let message) = RPCLine.parse(bytes) else { return }
        _ = try? message.decodeParams(HelloParams.self)
        _ = try? message.decodeParams(FetchCompletionParams.self)
        _ = try? message.decodeParams(SessionCreateParams.self)
        _ = try? message.decodeParams(CancelTaskParams.self)
        _ = try? message.decodeParams(BackgroundTaskParams.self)
        _ = try? message.decodeParams(BackgroundFetchIntervalParams.self).interval()
        _ = try? message.decodeParams(NotificationRequestParams.self).delay()
        _ = try? message.decodeParams(LocalNotificationParams.self)
        _ = try? message.decodeParams(UIStateParams.self)
        if let download = try? message.decodeParams(DownloadTaskParams.self), let resumeData = download.resumeData {
            _ = ResumeData(encoded: resumeData)
        }
        _ = try? message.encodedLine()
    }
}
