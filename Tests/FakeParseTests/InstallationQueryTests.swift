import Foundation
import Testing

@testable import FakeParse

@Suite struct InstallationQueryTests {
    let installation: [String: Any] = ["deviceType": "ios", "channels": ["", "news"], "badge": 3]

    @Test func equalityAndArrayMembership() {
        #expect(InstallationQuery(constraints: ["deviceType": "ios"]).matches(installation))
        #expect(!InstallationQuery(constraints: ["deviceType": "android"]).matches(installation))
        #expect(InstallationQuery(constraints: ["channels": "news"]).matches(installation))
        #expect(!InstallationQuery(constraints: ["channels": "sports"]).matches(installation))
    }

    @Test func operators() {
        #expect(InstallationQuery(constraints: ["channels": ["$in": ["sports", "news"]]]).matches(installation))
        #expect(!InstallationQuery(constraints: ["channels": ["$in": ["sports"]]]).matches(installation))
        #expect(InstallationQuery(constraints: ["deviceType": ["$ne": "android"]]).matches(installation))
        #expect(InstallationQuery(constraints: ["deviceToken": ["$exists": false]]).matches(installation))
        #expect(!InstallationQuery(constraints: ["deviceType": ["$exists": false]]).matches(installation))
        #expect(InstallationQuery(constraints: ["badge": 3]).matches(installation))
    }

    @Test func anEmptyQueryMatchesEverything() {
        #expect(InstallationQuery(constraints: [:]).matches(installation))
    }
}

@Suite struct PushPayloadTests {
    func object(_ payload: PushPayload, badge: Int? = nil) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: payload.json(badge: badge)) as? [String: Any])
    }

    @Test func silentPushMapsToApsContentAvailableAndHeaders() throws {
        let payload = PushPayload(data: ["content-available": 1, "push_type": "background", "priority": 5, "photoTitle": "Nebula"])
        let json = try object(payload)
        #expect((json["aps"] as? [String: Any])?["content-available"] as? Int == 1)
        #expect(json["photoTitle"] as? String == "Nebula")
        #expect(json["push_type"] == nil)
        #expect(payload.pushType == "background")
        #expect(payload.priority == 5)
    }

    @Test func defaultsAreAnAlertAtPriority10() throws {
        let payload = PushPayload(data: ["alert": "Hello", "title": "NASA TV", "sound": "default"])
        let aps = try #require(try object(payload)["aps"] as? [String: Any])
        #expect(payload.pushType == "alert")
        #expect(payload.priority == 10)
        #expect(aps["alert"] as? [String: String] == ["title": "NASA TV", "body": "Hello"])
        #expect(aps["sound"] as? String == "default")
    }

    @Test func contentAvailableOtherThanOneIsDropped() throws {
        let aps = try #require(try object(PushPayload(data: ["content-available": "1"]))["aps"] as? [String: Any])
        #expect(aps["content-available"] == nil)
    }

    @Test func anIncrementedBadgeIsWrittenPerInstallation() throws {
        let aps = try #require(try object(PushPayload(data: ["badge": "Increment"]), badge: 4)["aps"] as? [String: Any])
        #expect(aps["badge"] as? Int == 4)
    }
}
