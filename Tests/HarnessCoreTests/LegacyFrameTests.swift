import Foundation
import Recording
import Testing

@testable import FakeAPNs
@testable import HarnessCore

/// A recorded legacy notification is sent again in the command it came in, as the gateway's own
/// reader reads it.
struct LegacyFrameTests {
    static let token = String(repeating: "ab", count: 32)

    static func entry(_ headers: [(String, String)], token: String = token) -> HAR.Entry {
        HAR.Entry(
            startedDateTime: "2026-11-28T08:00:00.000Z",
            request: HAR.Request(
                method: "POST", url: "apns-legacy://127.0.0.1:2195/3/device/\(token)",
                httpVersion: "APNs legacy binary",
                headers: headers.map { HAR.Header(name: $0.0, value: $0.1) },
                postData: HAR.PostData(mimeType: "application/json", text: #"{"aps":{"alert":"hi"}}"#)),
            response: HAR.Response(
                status: 200, statusText: "OK", httpVersion: "APNs legacy binary", headers: [],
                content: HAR.Content(size: 0, mimeType: "")),
            timings: HAR.Timings(send: 0, wait: 0, receive: 0))
    }

    /// An hour after the entries' recorded moment.
    static let later = Date(timeIntervalSince1970: 1_795_852_800 + 3600)

    static func read(_ entry: HAR.Entry, replacing: [String: String] = [:]) throws -> LegacyFrameReader.Notification? {
        let bytes = try LegacyFrame(entry: entry, replacing: replacing, now: later).bytes
        guard case .notification(let notification, let length) = LegacyFrameReader.next(bytes), length == bytes.count
        else { return nil }
        return notification
    }

    @Test func aSimpleNotificationIsCommandZero() throws {
        let read = try #require(try Self.read(Self.entry([("x-legacy-identifier", "0")])))
        #expect(read.command == 0)
        #expect(read.token == [UInt8](repeating: 0xab, count: 32))
        #expect(String(decoding: read.payload, as: UTF8.self) == #"{"aps":{"alert":"hi"}}"#)
    }

    @Test func anExpiryMakesItCommandOneWithItsIdentifierMovedByAsLongAfterTheRecording() throws {
        let read = try #require(
            try Self.read(Self.entry([("apns-expiration", "1795852860"), ("x-legacy-identifier", "7")])))
        #expect(read.command == 1)
        #expect(read.identifier == 7)
        #expect(read.expiry == UInt32(1_795_856_460))
    }

    @Test func aPriorityMakesItCommandTwo() throws {
        let read = try #require(
            try Self.read(
                Self.entry([("apns-expiration", "0"), ("apns-priority", "5"), ("x-legacy-identifier", "9")])))
        #expect(read.command == 2)
        #expect(read.identifier == 9)
        #expect(read.expiry == 0)
        #expect(read.priority == 5)
    }

    @Test func theRecordedTokenIsReplacedByTodays() throws {
        let today = String(repeating: "cd", count: 32)
        let read = try #require(try Self.read(Self.entry([]), replacing: [Self.token: today]))
        #expect(read.token == [UInt8](repeating: 0xcd, count: 32))
    }

    @Test func anEntryThatCannotBeAFrameIsRefusedSayingWhy() {
        let noToken = #expect(throws: LegacyFrame.Unusable.self) {
            try LegacyFrame(entry: Self.entry([], token: "xyz"), replacing: [:])
        }
        #expect(noToken?.description == "its URL apns-legacy://127.0.0.1:2195/3/device/xyz ends in no device token")
        #expect(throws: LegacyFrame.Unusable.notANumber(header: "apns-priority", value: "300")) {
            try LegacyFrame(entry: Self.entry([("apns-priority", "300")]), replacing: [:])
        }
    }
}
