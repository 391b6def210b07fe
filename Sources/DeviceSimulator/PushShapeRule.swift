/// Apple's shape of a background update push, checked as it reaches the device: `apns-push-type:
/// background`, `apns-priority: 5`, and an `aps` holding only `content-available: 1`. A push that wakes
/// the app silently in another shape still wakes it here, as it often does on a phone, but Apple says
/// such a push "may be delayed, dropped or refused" (shared/reference/apns.md: `apns-push-type`,
/// background pushes): the device warns, so that a flow that passes here is not one that fails in the
/// field. A value: inputs in, the warning out.
public enum PushShapeRule {
    /// - Parameters:
    ///   - contentAvailable: `aps` has `content-available: 1`.
    ///   - userVisible: `aps` has an alert, a badge or a sound.
    /// - Returns: what is wrong with the push's shape, in words; nil when nothing is.
    public static func warning(pushType: String, priority: Int, contentAvailable: Bool, userVisible: Bool) -> String? {
        guard contentAvailable, !userVisible else { return nil }
        if pushType != "background" {
            return "a silent push (content-available: 1, no alert, badge or sound) sent as apns-push-type "
                + "\(pushType): Apple may delay, drop or refuse a push whose type does not match its payload; "
                + "send it with push_type background and priority 5"
        }
        if priority != 5 {
            return "a background push at priority \(priority): Apple says to always use priority 5 "
                + "(10 is an error) for background pushes"
        }
        return nil
    }
}
