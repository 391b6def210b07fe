import Foundation
import HarnessTimeline
import PushChannel
import Testing

@testable import FakeAPNs
@testable import HarnessCore

/// The gateway's notifications as the device receives them: an object payload decoded once; one that
/// is no JSON object is not received, and the timeline says why.
struct GatewayEndpointTests {
    static func accepted(_ payload: String) -> AcceptedNotification {
        AcceptedNotification(
            apnsId: "A", deviceToken: "token", topic: "com.example.app", pushType: "background", priority: 5,
            expiration: nil, collapseId: nil, payload: payload)
    }

    @Test func anObjectPayloadIsWhatTheDeviceReceives() throws {
        let push = try IncomingPush(Self.accepted(#"{"aps":{"content-available":1},"photoTitle":"M31"}"#))
        #expect(push.payload["photoTitle"] == "M31")
        #expect(push.apnsId == "A")
    }

    @Test(arguments: [#"[1, 2]"#, #""aps""#, "{", ""])
    func aPayloadThatIsNoObjectIsNotReceived(payload: String) {
        #expect(throws: DecodingError.self) { try IncomingPush(Self.accepted(payload)) }
    }
}
