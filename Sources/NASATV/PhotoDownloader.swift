import DeviceClient
import Foundation

/// The tutorial's `PhotoViewController` download: a background session
/// `com.razeware.backgroundsession.dailyphoto`, the file moved to `Library/Caches/com.razeware.photos/`.
///
/// Creating it recreates the session, which is how the app receives the events of a download that
/// finished while it was suspended or dead (the device waits for the session before handing them over).
@MainActor
final class PhotoDownloader: DeviceURLSessionDownloadDelegate {
    static let sessionIdentifier = "com.razeware.backgroundsession.dailyphoto"

    let application: Application
    let bugs: Set<AppDelegate.Bug>
    /// Called when a download ends, with its error (or the error moving the file).
    var onComplete: @MainActor ((any Error)?) -> Void = { _ in }
    /// Called when a background session's waiting events have all been delivered.
    var onEventsFinished: @MainActor () -> Void = {}
    private var session: DeviceURLSession!
    private var moveError: (any Error)?

    init(application: Application, bugs: Set<AppDelegate.Bug>) {
        self.application = application
        self.bugs = bugs
        // The buggy variant downloads in a default session, whose task dies with the app.
        let configuration: DeviceURLSessionConfiguration =
            bugs.contains(.defaultSession) ? .default : .background(withIdentifier: Self.sessionIdentifier)
        session = DeviceURLSession(configuration: configuration, delegate: self)
    }

    var photosDirectoryPath: String { application.container.caches + "/com.razeware.photos" }

    func start(url: URL) {
        moveError = nil
        session.downloadTask(with: url).resume()
    }

    func urlSession(
        _ session: DeviceURLSession, downloadTask: DeviceURLSessionDownloadTask, didFinishDownloadingTo location: URL
    ) {
        guard !bugs.contains(.leavesTemporaryFile) else {
            application.log("photo downloaded to \(location.path)")
            return
        }
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

    func urlSessionDidFinishEvents(forBackgroundURLSession session: DeviceURLSession) {
        onEventsFinished()
    }
}
