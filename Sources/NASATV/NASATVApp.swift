import DeviceClient
import Foundation

/// The reference app under test, written the way the NASA TV tutorial's app works (chapter 11): it
/// registers for pushes and saves its Parse installation; a silent push starts a background download
/// of the daily photo, and when the download is done it posts "Astronomy Picture of the Day Available"
/// and only then calls the fetch completion handler.
///
/// `--bug never-calls-completion-handler` makes it forget the handler, so the harness's watchdog rule
/// can be seen catching it.
@main
struct NASATVApp {
    static let bundleIdentifier = "com.razeware.NASA-TV"

    @MainActor
    static func main() {
        let arguments = CommandLine.arguments
        var bugs = Set<AppDelegate.Bug>()
        if let index = arguments.firstIndex(of: "--bug"), index + 1 < arguments.count {
            guard let bug = AppDelegate.Bug(rawValue: arguments[index + 1]) else {
                FileHandle.standardError.write(Data("nasa-tv: unknown --bug \(arguments[index + 1])\n".utf8))
                exit(64)
            }
            bugs.insert(bug)
        }
        ApplicationMain(bundleIdentifier: bundleIdentifier, delegate: AppDelegate(bugs: bugs))
    }
}
