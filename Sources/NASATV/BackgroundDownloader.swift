import DeviceClient
import Foundation

/// The tutorial's downloads in background sessions: the daily photo (`PhotoViewController`, session
/// `com.razeware.backgroundsession.dailyphoto`, moved to `Library/Caches/com.razeware.photos/`) and the
/// video (`VideoViewController`, `com.razeware.backgroundsession.videos`, `Library/Caches/com.razeware.videos/`).
///
/// Creating it recreates the session, which is how the app receives the events of a download that
/// finished while it was suspended or dead (the device waits for the session before handing them over).
@MainActor
final class BackgroundDownloader: DeviceURLSessionDownloadDelegate {
    static let photoSession = "com.razeware.backgroundsession.dailyphoto"
    static let videoSession = "com.razeware.backgroundsession.videos"

    let application: Application
    let bugs: Set<AppDelegate.Bug>
    /// Where finished files go, in `Library/Caches`, and under which name.
    let folder: String
    let fileName: String
    /// Called when a download ends, with its error (or the error moving the file).
    var onComplete: @MainActor ((any Error)?) -> Void = { _ in }
    /// Called when a background session's waiting events have all been delivered.
    var onEventsFinished: @MainActor () -> Void = {}
    private let identifier: String
    /// Created at once, or (the `no-session-at-launch` bug) by the first download.
    private var session: DeviceURLSession?
    private var moveError: (any Error)?

    init(
        application: Application, bugs: Set<AppDelegate.Bug>, session identifier: String, folder: String,
        fileName: String,
        creatingSession: Bool = true
    ) {
        self.application = application
        self.bugs = bugs
        self.folder = folder
        self.fileName = fileName
        self.identifier = identifier
        if creatingSession { session = makeSession() }
    }

    private func makeSession() -> DeviceURLSession {
        // The buggy variant downloads in a default session, whose task dies with the app.
        let configuration: DeviceURLSessionConfiguration =
            bugs.contains(.defaultSession) ? .default : .background(withIdentifier: identifier)
        return DeviceURLSession(configuration: configuration, delegate: self)
    }

    var directoryPath: String {
        bugs.contains(.savesInDocuments)
            ? application.container.documents + "/" + folder : application.container.caches + "/" + folder
    }
    /// The finished file's place.
    var destination: URL { URL(fileURLWithPath: directoryPath).appendingPathComponent(fileName) }

    /// Recreates the session if it is not there yet: how the app asks for the events waiting for it.
    func recreateSession() {
        if session == nil { session = makeSession() }
    }

    func start(url: URL) {
        moveError = nil
        let session = session ?? makeSession()
        self.session = session
        session.downloadTask(with: url).resume()
    }

    func urlSession(
        _ session: DeviceURLSession, downloadTask: DeviceURLSessionDownloadTask, didFinishDownloadingTo location: URL
    ) {
        guard !bugs.contains(.leavesTemporaryFile) else {
            application.log("photo downloaded to \(location.path)")
            return
        }
        do {
            try FileManager.default.createDirectory(atPath: directoryPath, withIntermediateDirectories: true)
            if FileManager.default.fileExists(atPath: destination.path) {
                try FileManager.default.removeItem(at: destination)
            }
            try FileManager.default.moveItem(at: location, to: destination)
        } catch {
            moveError = error
        }
    }

    func urlSession(
        _ session: DeviceURLSession, task: DeviceURLSessionDownloadTask, didCompleteWithError error: (any Error)?
    ) {
        onComplete(error ?? moveError)
    }

    func urlSessionDidFinishEvents(forBackgroundURLSession session: DeviceURLSession) {
        onEventsFinished()
    }
}
