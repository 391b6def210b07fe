import DeviceClient
import Foundation

/// The tutorial's `PhotoViewController` download: a background session
/// `com.razeware.backgroundsession.dailyphoto`, the file moved to `Library/Caches/com.razeware.photos/`.
@MainActor
final class PhotoDownloader: DeviceURLSessionDownloadDelegate {
    static let sessionIdentifier = "com.razeware.backgroundsession.dailyphoto"

    let application: Application
    let onComplete: @MainActor ((any Error)?) -> Void
    var session: DeviceURLSession?
    var moveError: (any Error)?

    init(application: Application, onComplete: @escaping @MainActor ((any Error)?) -> Void) {
        self.application = application
        self.onComplete = onComplete
    }

    var photosDirectoryPath: String { application.container.caches + "/com.razeware.photos" }

    func start(url: URL) {
        let session = DeviceURLSession(
            configuration: .background(withIdentifier: Self.sessionIdentifier), delegate: self)
        self.session = session
        session.downloadTask(with: url).resume()
    }

    func urlSession(
        _ session: DeviceURLSession, downloadTask: DeviceURLSessionDownloadTask, didFinishDownloadingTo location: URL
    ) {
        let destination = URL(fileURLWithPath: photosDirectoryPath).appendingPathComponent("dailyphoto.jpg")
        do {
            try FileManager.default.createDirectory(atPath: photosDirectoryPath, withIntermediateDirectories: true)
            if FileManager.default.fileExists(atPath: destination.path) {
                try FileManager.default.removeItem(at: destination)
            }
            try FileManager.default.moveItem(at: location, to: destination)
        } catch {
            moveError = error
        }
    }

    func urlSession(_ session: DeviceURLSession, task: DeviceURLSessionDownloadTask, didCompleteWithError error: (any Error)?) {
        onComplete(error ?? moveError)
    }
}
