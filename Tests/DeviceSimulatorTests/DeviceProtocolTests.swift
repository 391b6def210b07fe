import DeviceProtocol
import Foundation
import Testing

@Suite struct DeviceProtocolTests {
    @Test func aRequestIsOneLineOfJSONRPC() throws {
        let message = try RPCMessage.request(
            id: 3, DeviceMethod.fetchCompletion, FetchCompletionParams(completionId: 7, result: "newData"))
        let line = try message.encodedLine()
        #expect(line.last == UInt8(ascii: "\n"))
        #expect(!line.dropLast().contains(UInt8(ascii: "\n")))
        #expect(
            String(decoding: line, as: UTF8.self)
                == #"{"id":3,"jsonrpc":"2.0","method":"fetchCompletion","params":{"completionId":7,"result":"newData"}}"#
                + "\n")
        let decoded = try RPCMessage.decode(line: line.dropLast())
        #expect(decoded == message)
        #expect(try decoded.decodeParams(FetchCompletionParams.self).completionId == 7)
        #expect(!decoded.isResponse)
    }

    @Test func responsesAndErrorsAreTellable() throws {
        let ok = try RPCMessage.response(id: 1, RegisterResult(deviceToken: "ab"))
        let failure = RPCMessage.failure(id: 2, .methodNotFound("teleport"))
        #expect(ok.isResponse && failure.isResponse)
        #expect(failure.error?.code == -32601)
        #expect(failure.error?.message == "unknown method 'teleport'")
    }

    @Test func pushPayloadsKeepTheirShape() throws {
        let json =
            #"{"aps":{"content-available":1,"alert":{"title":"T"}},"photoTitle":"Nebula","ids":[1,2.5],"flag":true,"none":null}"#
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(json.utf8))
        #expect(value["aps"]?["content-available"]?.numberValue == 1)
        #expect(value["photoTitle"]?.stringValue == "Nebula")
        #expect(value["ids"] == [1, .number(2.5)])
        #expect(value["flag"] == true)
        #expect(value["none"] == .null)
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data(value.jsonString().utf8)) == value)
    }

    /// Numbers an app sends are checked before the device computes with them: each of these once
    /// trapped the whole harness.
    @Test(
        arguments: [
            (nil, nil, true), (0, .zero, true), (900, .seconds(900), true), (315_360_000, .seconds(315_360_000), true),
            (Double.greatestFiniteMagnitude, nil, true), (1e300, nil, false), (-1, nil, false),
            (Double.nan, nil, false),
        ] as [(Double?, Duration?, Bool)])
    func backgroundFetchIntervals(_ seconds: Double?, _ interval: Duration?, _ accepted: Bool) throws {
        let params = BackgroundFetchIntervalParams(seconds: seconds)
        if accepted {
            #expect(try params.interval() == interval)
        } else {
            #expect(throws: RPCError.self) { try params.interval() }
        }
    }

    @Test(
        arguments: [
            (nil, nil, true), (2.5, .milliseconds(2500), true), (0, nil, false), (-3, nil, false), (1e300, nil, false),
            (Double.infinity, nil, false),
        ] as [(Double?, Duration?, Bool)])
    func notificationDelays(_ interval: Double?, _ delay: Duration?, _ accepted: Bool) throws {
        let params = NotificationRequestParams(identifier: "n", timeInterval: interval)
        if accepted {
            #expect(try params.delay() == delay)
        } else {
            #expect(throws: RPCError.self) { try params.delay() }
        }
    }
}
