import DeviceProtocol
import DeviceSimulator
import PushChannel
import Testing

@Suite struct IncomingPushTests {
    func push(_ aps: JSONValue) -> IncomingPush {
        IncomingPush(apnsId: "id", topic: "t", pushType: "background", priority: 5, payload: ["aps": aps])
    }

    @Test func contentAvailableMustBeTheNumberOne() {
        #expect(push(["content-available": 1]).isContentAvailable)
        #expect(!push(["content-available": 0]).isContentAvailable)
        #expect(!push(["content-available": "1"]).isContentAvailable)
        #expect(!push(["alert": "hello"]).isContentAvailable)
    }
}
