import DeviceClient
import Foundation

/// The reference app under test, written the way the NASA TV tutorial's app works (chapter 11): it
/// registers for pushes and saves its Parse installation; a silent push starts a background download
/// of the daily photo, and when the download is done it posts "Astronomy Picture of the Day Available"
/// and only then calls the fetch completion handler. Relaunched for its background session, it
/// recreates the session, takes the photo and calls the session's completion handler. Its first screen
/// is the NASA TV video: Download (a background session into `Caches/com.razeware.videos/`), then Play.
///
/// `--bug <name>` (repeatable) builds in a mistake for the harness to catch (see ``AppDelegate/Bug``);
/// `--fetch-completes-at-once` is the fixed flow for slow networks; `--user-notifications` posts with
/// UserNotifications (presented as a banner when on screen) instead of `presentLocalNotificationNow`;
/// `--background-work <seconds>` finishes that much work under a background task after Home;
/// `--parse-timeout <seconds>` is the Parse requests' timeout (URLSession's 60 s by default).
@main
struct NASATVApp {
    static let bundleIdentifier = "com.razeware.NASA-TV"

    @MainActor
    static func main() {
        var arguments = CommandLine.arguments.dropFirst()[...]
        var bugs = Set<AppDelegate.Bug>()
        var completesFetchAtOnce = false
        var usesUserNotifications = false
        var backgroundWork: Double?
        var parseTimeout = 60.0
        while let argument = arguments.popFirst() {
            switch argument {
            case "--bug":
                guard let name = arguments.popFirst(), let bug = AppDelegate.Bug(rawValue: name) else {
                    let known = AppDelegate.Bug.allCases.map(\.rawValue).joined(separator: ", ")
                    fail("--bug needs one of: \(known)")
                }
                bugs.insert(bug)
            case "--fetch-completes-at-once":
                completesFetchAtOnce = true
            case "--user-notifications":
                usesUserNotifications = true
            case "--background-work":
                guard let seconds = arguments.popFirst().flatMap(Double.init), seconds >= 0 else {
                    fail("--background-work needs a number of seconds")
                }
                backgroundWork = seconds
            case "--parse-timeout":
                guard let seconds = arguments.popFirst().flatMap(Double.init), seconds > 0, seconds <= 3600 else {
                    fail("--parse-timeout needs a number of seconds, above 0 and at most 3600")
                }
                parseTimeout = seconds
            default:
                fail("unknown argument '\(argument)'")
            }
        }
        ApplicationMain(
            bundleIdentifier: bundleIdentifier,
            delegate: AppDelegate(
                bugs: bugs, completesFetchAtOnce: completesFetchAtOnce, usesUserNotifications: usesUserNotifications,
                backgroundWork: backgroundWork, parseTimeout: parseTimeout))
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("nasa-tv: \(message)\n".utf8))
        exit(64)
    }
}
