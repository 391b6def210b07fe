import DeviceProtocol
import ParseModel
import Testing

/// A push's `data` made into each installation's APNs notification, as Parse's APNs adapter does
/// (parse.md §2.5).
@Suite struct ApplePushTests {
    let installation: [String: JSONValue] = [
        "objectId": "o1", "deviceToken": "abc", "appIdentifier": "com.razeware.NASA-TV", "badge": 4,
    ]

    func push(
        _ data: [String: JSONValue], badgePerInstallation: Bool = false, for installation: [String: JSONValue]? = nil
    )
        throws -> ApplePush
    {
        try #require(
            ApplePushTemplate(data: data, badgePerInstallation: badgePerInstallation).push(
                for: installation ?? self.installation, expiration: 1_900_000_000))
    }

    @Test func aSilentPushMapsToContentAvailableAndItsHeadersWithCustomKeysBesideAps() throws {
        let push = try push([
            "content-available": 1, "push_type": "background", "priority": 5, "photoTitle": "Nebula",
            "collapse_id": "daily",
        ])
        #expect(push.payload == ["aps": ["content-available": 1], "photoTitle": "Nebula"])
        #expect(push.pushType == "background")
        #expect(push.priority == "5")
        #expect(push.collapseId == "daily")
        #expect(push.topic == "com.razeware.NASA-TV", "the topic is the installation's appIdentifier")
        #expect(push.expiration == 1_900_000_000)
        #expect(push.deviceToken == "abc")
    }

    @Test func defaultsAreAnAlertAtPriority10AndTitleJoinsTheAlert() throws {
        let push = try push(["alert": "Hello", "title": "NASA TV", "sound": "default", "threadId": "t"])
        #expect(push.pushType == "alert")
        #expect(push.priority == "10")
        #expect(
            push.payload == [
                "aps": ["alert": ["title": "NASA TV", "body": "Hello"], "sound": "default", "thread-id": "t"]
            ])
    }

    @Test(arguments: [JSONValue.string("1"), .bool(true), .number(2)])
    func contentAvailableOtherThanTheNumberOneIsDropped(_ value: JSONValue) throws {
        #expect(try push(["content-available": value]).payload == ["aps": [:]])
    }

    @Test func anIncrementingPushSendsEachInstallationsOwnBadge() throws {
        #expect(try push(["badge": "Increment"], badgePerInstallation: true).payload == ["aps": ["badge": 4]])
        #expect(try push(["badge": "Increment"]).payload == ["aps": [:]], "a word is no badge for APNs")
    }

    /// A stored badge is whatever number a client saved (Parse takes any); a push sends it as a whole
    /// number in the range iOS shows.
    @Test(
        arguments: [
            (JSONValue.number(0), 0), (7, 7), (.number(7.9), 7), (-1, 0), (.number(2_147_483_648), 2_147_483_647),
            (.number(1e300), 2_147_483_647), (.number(-1e300), 0),
        ] as [(JSONValue, Int)])
    func aStoredBadgeIsSentInTheRangeIOSShows(_ stored: JSONValue, _ sent: Int) throws {
        var installation = installation
        installation["badge"] = stored
        let push = try push(["badge": "Increment"], badgePerInstallation: true, for: installation)
        #expect(push.payload["aps"]?["badge"] == .number(Double(sent)))
    }

    @Test func aStoredBadgeThatIsNoNumberIsNotSent() throws {
        var installation = installation
        installation["badge"] = "3"
        #expect(try push(["badge": "Increment"], badgePerInstallation: true, for: installation).payload == ["aps": [:]])
    }

    @Test func anInstallationWithoutATokenGetsNothing() {
        #expect(
            ApplePushTemplate(data: [:], badgePerInstallation: false).push(for: ["objectId": "x"], expiration: nil)
                == nil)
    }
}
