import Foundation
import HarnessTimeline

/// What happened on each named device of a run, from its events: the report's per-device part.
struct DeviceSummary: Codable, Equatable {
    var name: String
    /// Pushes the device received (`device.push.received`), whatever it then did with them.
    var pushesReceived: Int
    /// The bodies of the notifications it showed, in order.
    var notificationsShown: [String]
    /// How its apps' processes ended (`device.app.exited`'s causes), in order.
    var appExits: [String]

    /// One per device named on the timeline, in the order they first appear; none for a run of the one
    /// device a scenario that names none has.
    static func of(_ events: [TimelineEvent]) -> [DeviceSummary] {
        var summaries: [DeviceSummary] = []
        for event in events {
            guard let name = event["device"] else { continue }
            var index = summaries.firstIndex { $0.name == name }
            if index == nil {
                summaries.append(DeviceSummary(name: name, pushesReceived: 0, notificationsShown: [], appExits: []))
                index = summaries.count - 1
            }
            guard let index else { continue }
            switch event.kind {
            case .pushReceived: summaries[index].pushesReceived += 1
            case .notificationShown: summaries[index].notificationsShown.append(event["body"] ?? "")
            case .appExited: summaries[index].appExits.append(event["cause"] ?? "")
            default: break
            }
        }
        return summaries
    }
}
