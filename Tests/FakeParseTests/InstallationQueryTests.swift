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

    /// A saved badge, as JSON reads it: a whole number in what iOS shows is kept, anything else refused.
    @Test(
        arguments: [
            ("0", 0), ("7", 7), ("7.0", 7), ("2147483647", 2_147_483_647), ("true", nil), ("false", nil), ("1.5", nil),
            ("-1", nil), (#""3""#, nil), ("{}", nil), (#"{"__op": "Increment"}"#, nil), ("[1]", nil),
            ("2147483648", nil),
            ("9223372036854775807", nil), ("1e300", nil),
        ] as [(String, Int?)])
    func aSavedBadgeIsAWholeNumberIOSShows(json: String, kept: Int?) throws {
        let object = try JSONSerialization.jsonObject(with: Data(#"{"badge": \#(json)}"#.utf8)) as? [String: Any]
        let value = try #require(object?["badge"])
        if let kept {
            #expect(try ParseRoutes.badge(value) == kept)
        } else {
            #expect(throws: ParseError.self) { try ParseRoutes.badge(value) }
        }
    }
}

/// Parse's ISO dates, read without ICU.
@Suite struct ISODateTests {
    @Test(arguments: [
        ("1970-01-01T00:00:00Z", 0), ("2015-03-19T22:05:08Z", 1_426_802_708),
        ("2015-03-19T22:05:08.123Z", 1_426_802_708),
        ("2030-01-01T00:00:00.000000001Z", 1_893_456_000), ("2015-03-19T23:05:08+01:00", 1_426_802_708),
        ("2000-02-29T12:00:00Z", 951_825_600), ("9999-12-31T23:59:59Z", 253_402_300_799),
    ])
    func validDates(_ text: String, _ seconds: Int) {
        #expect(ISODate.epochSeconds(text) == seconds)
    }

    @Test(arguments: [
        "", "2015-03-19", "2015-03-19T22:05:08", "2015-13-19T22:05:08Z", "2015-02-29T22:05:08Z", "2015-03-19T24:05:08Z",
        "2015-03-19T22:05:08.Z", "2015-03-19T22:05:08+1:00", "2015-03-19 22:05:08Z", "2015-03-19T22:05:08Zjunk",
        // Foundation's ICU-based ISO8601DateFormatter dies with SIGFPE on this one (found by the fuzzer).
        "2030-01-01T0:00:00.00022222222222222222222222222222222222222222222222222222222222222222Z",
        "2030-01-01T00:00:00.0002222222222222222222222Z", "１９７０-01-01T00:00:00Z",
    ])
    func invalidDates(_ text: String) {
        #expect(ISODate.epochSeconds(text) == nil)
    }
}
