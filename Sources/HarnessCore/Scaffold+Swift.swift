import Foundation

extension Scaffold {
    /// Where a Swift app's Package.swift finds PushHarness, for its `DeviceClient` product.
    public enum HarnessPackage: Sendable, Equatable {
        /// A checkout on this machine, by its absolute path.
        case path(String)
        /// A git repository SwiftPM can clone, at its `main` branch.
        case url(String)

        /// As `--harness-package` takes it: an address with a scheme (`https://…`, `file://…`,
        /// `ssh://…`) or `git@host:…` is a repository; anything else is a folder, made absolute
        /// against `directory`.
        public init(argument: String, relativeTo directory: URL) throws(ScaffoldError) {
            guard !argument.isEmpty, argument.utf8.count <= 4096,
                !argument.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else { throw .unusableHarnessPackage }
            if argument.contains("://") || argument.hasPrefix("git@") {
                self = .url(argument)
            } else {
                let folder =
                    argument.hasPrefix("/")
                    ? URL(fileURLWithPath: argument) : directory.appendingPathComponent(argument)
                self = .path(folder.standardizedFileURL.path)
            }
        }

        /// SwiftPM's identity for the package: the last part of its path or URL, without `.git`,
        /// lowercased. `.product(name:package:)` names it by that.
        public var identity: String {
            let location: String
            switch self {
            case .path(let path): location = path
            case .url(let url): location = url
            }
            var last = location.split(whereSeparator: { $0 == "/" || $0 == ":" }).last.map(String.init) ?? location
            if last.hasSuffix(".git") { last.removeLast(4) }
            return last.lowercased()
        }

        /// The dependency's line in Package.swift.
        public var manifestLine: String {
            switch self {
            case .path(let path): ".package(path: \(Self.literal(path)))"
            case .url(let url): ".package(url: \(Self.literal(url)), branch: \"main\")"
            }
        }

        /// `text` as a Swift string literal.
        static func literal(_ text: String) -> String {
            "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                + "\""
        }
    }

    /// The Swift package `harness init --language swift` writes: one executable target using
    /// PushHarness's `DeviceClient`.
    static func swiftPackage(name: String, harness: HarnessPackage) -> String {
        """
        // swift-tools-version: 6.0
        // An app under test for PushHarness, in Swift. `harness run` builds it (`swift build`) before
        // the first launch; harness.yml runs `.build/debug/\(name)`.
        import PackageDescription

        let package = Package(
            name: "\(name)",
            platforms: [.macOS(.v14)],
            dependencies: [
                // PushHarness, for DeviceClient: UIKit's and URLSession's shapes over the device protocol.
                // `package:` below is SwiftPM's name for it, the last part of this path or URL. In CI, name
                // a repository the job can clone (harness init --language swift --harness-package URL).
                \(harness.manifestLine)
            ],
            targets: [
                .executableTarget(
                    name: "\(name)",
                    dependencies: [.product(name: "DeviceClient", package: "\(harness.identity)")]
                )
            ]
        )

        """
    }

    /// The app's one source file: the device protocol through DeviceClient's UIKit-shaped API.
    static let swiftApp = #"""
        // An app under test for PushHarness, in Swift, on PushHarness's DeviceClient: an application
        // delegate, background URL sessions and local notifications with UIKit's and URLSession's names,
        // spoken to the simulated iPhone over the device protocol (PushHarness's docs/device-protocol.md).
        // What it does is what the harness.yml beside it checks:
        //
        // - at launch: creates its background session, registers for remote notifications and saves its
        //   Parse installation with the device token it is given;
        // - on a silent push (content-available: 1): downloads today's file in the background session,
        //   moves it to Library/Caches/today.json when the download finishes, posts a local notification
        //   and calls the push's completion handler with newData;
        // - woken or relaunched for the session's events (handleEventsForBackgroundURLSession): takes them
        //   in the session created at launch and calls the session's completion handler.
        //
        // `--forget-notification` builds in a bug (no local notification) for the failing variant.

        import DeviceClient
        import Foundation

        #if canImport(FoundationNetworking)
        import FoundationNetworking
        #endif

        @main
        struct Main {
            @MainActor
            static func main() {
                let delegate = AppDelegate(forgetsNotification: CommandLine.arguments.contains("--forget-notification"))
                // The bundle id is harness.yml's (bundleId), as the device launched the app with it.
                ApplicationMain(
                    bundleIdentifier: ProcessInfo.processInfo.environment["HARNESS_BUNDLE_ID"] ?? "", delegate: delegate)
            }
        }

        @MainActor
        final class AppDelegate: ApplicationDelegate, DeviceURLSessionDownloadDelegate {
            static let sessionIdentifier = "com.example.background-session"

            let forgetsNotification: Bool
            let environment = ProcessInfo.processInfo.environment
            var session: DeviceURLSession?
            /// The silent pushes' completion handlers, called when the download ends.
            var fetchCompletions: [@MainActor (BackgroundFetchResult) -> Void] = []
            /// handleEventsForBackgroundURLSession's handler, called once the session's events are in.
            var eventsCompletion: (@MainActor () -> Void)?
            var moveError: (any Error)?

            init(forgetsNotification: Bool) {
                self.forgetsNotification = forgetsNotification
            }

            // UIApplicationDelegate

            func application(_ application: Application, didFinishLaunchingWithOptions launchOptions: LaunchOptions) -> Bool {
                // Creating the background session at launch is how the app hears of a download that ended
                // while it was suspended or not running: its events wait for the session.
                session = DeviceURLSession(configuration: .background(withIdentifier: Self.sessionIdentifier), delegate: self)
                application.registerForRemoteNotifications()
                return true
            }

            func application(_ application: Application, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {
                let token = deviceToken.hexString
                Task {
                    do {
                        try await saveInstallation(token: token, application: application)
                        application.log("installation saved")
                    } catch {
                        application.log("installation not saved: \(error)")
                    }
                }
            }

            func application(
                _ application: Application, didReceiveRemoteNotification userInfo: [String: JSONValue],
                fetchCompletionHandler completionHandler: @escaping @MainActor (BackgroundFetchResult) -> Void
            ) {
                guard userInfo["aps"]?["content-available"]?.numberValue == 1,
                    let base = environment["HARNESS_MEDIA_URL"], let url = URL(string: base + "/daily/today.json"),
                    let session
                else {
                    completionHandler(.noData)
                    return
                }
                fetchCompletions.append(completionHandler)
                moveError = nil
                session.downloadTask(with: url).resume()
            }

            func application(
                _ application: Application, handleEventsForBackgroundURLSession identifier: String,
                completionHandler: @escaping @MainActor () -> Void
            ) {
                eventsCompletion = completionHandler
            }

            // URLSessionDownloadDelegate

            func urlSession(
                _ session: DeviceURLSession, downloadTask: DeviceURLSessionDownloadTask, didFinishDownloadingTo location: URL
            ) {
                // Move the file now: the system deletes it as soon as this returns.
                let caches = URL(fileURLWithPath: Application.shared.container.caches)
                let destination = caches.appendingPathComponent("today.json")
                do {
                    try FileManager.default.createDirectory(at: caches, withIntermediateDirectories: true)
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
                let application = Application.shared!
                let failure = error ?? moveError
                if let failure {
                    application.log("download failed: \(failure)")
                } else if !forgetsNotification {
                    var notification = LocalNotification()
                    notification.alertBody = "Today's stories are here"
                    application.presentLocalNotificationNow(notification)
                }
                let completions = fetchCompletions
                fetchCompletions.removeAll()
                for completion in completions { completion(failure == nil ? .newData : .failed) }
            }

            func urlSessionDidFinishEvents(forBackgroundURLSession session: DeviceURLSession) {
                eventsCompletion?()
                eventsCompletion = nil
            }

            // Parse: PFInstallation.saveInBackground, as its REST call.

            func saveInstallation(token: String, application: Application) async throws {
                guard let base = environment["HARNESS_PARSE_URL"], let url = URL(string: base + "/classes/_Installation")
                else { throw InstallationError.notConfigured }
                var request = URLRequest(url: url)
                request.httpMethod = "POST"
                request.timeoutInterval = 10
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                request.setValue(environment["HARNESS_PARSE_APPLICATION_ID"], forHTTPHeaderField: "X-Parse-Application-Id")
                if let key = environment["HARNESS_PARSE_CLIENT_KEY"] {
                    request.setValue(key, forHTTPHeaderField: "X-Parse-Client-Key")
                }
                let body: JSONValue = [
                    "deviceType": "ios", "deviceToken": .string(token),
                    "installationId": .string(try installationId(application)),
                    "appIdentifier": .string(application.bundleIdentifier), "channels": [""],
                ]
                request.httpBody = Data(body.jsonString().utf8)
                let (data, response) = try await URLSession.shared.data(for: request)
                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                guard (200..<300).contains(status) else {
                    throw InstallationError.refused(status: status, body: String(decoding: data.prefix(500), as: UTF8.self))
                }
            }

            /// One installation id for the app's life, kept in its container (a relaunch updates it).
            func installationId(_ application: Application) throws -> String {
                let documents = URL(fileURLWithPath: application.container.documents)
                let kept = documents.appendingPathComponent("installation-id")
                if let id = FileManager.default.contents(atPath: kept.path) { return String(decoding: id, as: UTF8.self) }
                let id = UUID().uuidString.lowercased()
                try FileManager.default.createDirectory(at: documents, withIntermediateDirectories: true)
                try Data(id.utf8).write(to: kept, options: .atomic)
                return id
            }
        }

        enum InstallationError: Error, CustomStringConvertible {
            case notConfigured
            case refused(status: Int, body: String)

            var description: String {
                switch self {
                case .notConfigured: "HARNESS_PARSE_URL is not set: the app runs under PushHarness's device"
                case .refused(let status, let body): "Parse answered \(status): \(body)"
                }
            }
        }

        """#
}
