import Foundation

/// Turns a Parse push's `data` into the APNs payload and headers, as Parse's APNs adapter does.
struct PushPayload {
    var aps: [String: Any] = [:]
    var custom: [String: Any] = [:]
    var pushType = "alert"
    var priority = 10
    var collapseId: String?

    init(data: [String: Any]) {
        for (key, value) in data {
            switch key {
            case "alert": aps["alert"] = value
            case "badge": if value is Int || value is Double { aps["badge"] = value }
            case "sound": aps["sound"] = value
            case "content-available": if (value as? Int) == 1 { aps["content-available"] = 1 }
            case "mutable-content": if (value as? Int) == 1 { aps["mutable-content"] = 1 }
            case "category": aps["category"] = value
            case "threadId": aps["thread-id"] = value
            case "title": break
            case "push_type": pushType = value as? String ?? pushType
            case "priority": priority = (value as? Int) ?? Int(value as? String ?? "") ?? priority
            case "collapse_id", "collapseId": collapseId = value as? String
            case "aps": if let raw = value as? [String: Any] { aps.merge(raw) { _, new in new } }
            default: custom[key] = value
            }
        }
        if let title = data["title"] as? String {
            if let body = aps["alert"] as? String {
                aps["alert"] = ["title": title, "body": body]
            } else {
                var alert = aps["alert"] as? [String: Any] ?? [:]
                alert["title"] = title
                aps["alert"] = alert
            }
        }
    }

    /// The JSON body: custom keys next to `aps`.
    func json(badge: Int?) -> Data {
        var object = custom
        var aps = aps
        if let badge { aps["badge"] = badge }
        object["aps"] = aps
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
    }
}
