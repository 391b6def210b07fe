import DeviceSimulator
import Testing

/// Apple's shape of a background push, a test per rule.
struct PushShapeRuleTests {
    @Test func aSilentPushAsABackgroundPushAtPriority5IsRight() {
        #expect(
            PushShapeRule.warning(pushType: "background", priority: 5, contentAvailable: true, userVisible: false)
                == nil)
    }

    @Test func aSilentPushSentAsAnAlertIsWarnedAbout() {
        let warning = PushShapeRule.warning(pushType: "alert", priority: 10, contentAvailable: true, userVisible: false)
        #expect(warning?.contains("sent as apns-push-type alert") == true)
        #expect(warning?.contains("push_type background and priority 5") == true)
    }

    @Test func aBackgroundPushAtAnotherPriorityIsWarnedAbout() {
        let warning = PushShapeRule.warning(
            pushType: "background", priority: 1, contentAvailable: true, userVisible: false)
        #expect(warning?.hasPrefix("a background push at priority 1") == true)
    }

    @Test func aVisiblePushOrOneThatDoesNotWakeIsNoneOfTheRulesBusiness() {
        #expect(
            PushShapeRule.warning(pushType: "alert", priority: 10, contentAvailable: true, userVisible: true) == nil)
        #expect(
            PushShapeRule.warning(pushType: "alert", priority: 10, contentAvailable: false, userVisible: true) == nil)
    }
}
