import Foundation
import ParseModel
import Testing

@testable import FakeParse

@Suite struct PushPayloadTests {
    func object(_ payload: PushPayload, badge: Int? = nil) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: payload.json(badge: badge)) as? [String: Any])
    }

    @Test func silentPushMapsToApsContentAvailableAndHeaders() throws {
        let payload = PushPayload(data: [
            "content-available": 1, "push_type": "background", "priority": 5, "photoTitle": "Nebula",
        ])
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

    /// A stored badge is the client's number; an `Increment` push never overflows on it.
    @Test(
        arguments: [
            (nil, 1), (0, 1), (4, 5), (-7, 1), (2_147_483_646, 2_147_483_647), (2_147_483_647, 2_147_483_647),
            (Int.max, 2_147_483_647), (Int.min, 1),
        ] as [(Int?, Int)])
    func anIncrementedBadgeStaysInTheRangeIOSShows(stored: Int?, sent: Int) {
        #expect(PushSender.incremented(stored) == sent)
    }

    /// A stored badge is whatever number a client saved (Parse takes any); a push reads it as a whole
    /// number in the range iOS shows before adding to it.
    @Test(
        arguments: [
            ("0", 0), ("7", 7), ("7.9", 7), ("-1", 0), ("2147483648", 2_147_483_647), ("1e300", 2_147_483_647),
            ("-1e300", 0), (#""3""#, nil), ("true", nil), ("null", nil), ("[1]", nil),
        ] as [(String, Int?)])
    func aStoredBadgeIsReadInTheRangeIOSShows(json: String, read: Int?) throws {
        let value = try ParseJSON.decode(Data(json.utf8))
        #expect(PushSender.badge(value) == read)
    }
}
