import Testing

@testable import FakeAPNs

/// The legacy binary interface, byte by byte: each command, each item, each status the reader gives,
/// a frame cut anywhere, and bytes that are no command at all.
@Suite struct LegacyFrameReaderTests {
    typealias Notification = LegacyFrameReader.Notification

    let token = [UInt8](repeating: 0xAB, count: 32)
    let payload = Array(#"{"aps":{"alert":"Hi"}}"#.utf8)

    func simple(token: [UInt8]? = nil, payload: [UInt8]? = nil) -> [UInt8] {
        LegacyBytes.simple(token: token ?? self.token, payload: payload ?? self.payload)
    }

    func enhanced(id: UInt32, expiry: UInt32, token: [UInt8]? = nil, payload: [UInt8]? = nil) -> [UInt8] {
        LegacyBytes.enhanced(id: id, expiry: expiry, token: token ?? self.token, payload: payload ?? self.payload)
    }

    func items(id: UInt32 = 7, expiry: UInt32 = 0, priority: UInt8 = 10) -> [[UInt8]] {
        [
            LegacyBytes.item(1, token), LegacyBytes.item(2, payload), LegacyBytes.item(3, LegacyBytes.be32(id)),
            LegacyBytes.item(4, LegacyBytes.be32(expiry)), LegacyBytes.item(5, [priority]),
        ]
    }

    func refused(_ status: LegacyStatus, _ identifier: UInt32) -> LegacyFrameReader.Step {
        .refused(LegacyErrorResponse(status: status, identifier: identifier))
    }

    @Test func commandZeroIsATokenAndAPayload() {
        let bytes = simple()
        #expect(
            LegacyFrameReader.next(bytes)
                == .notification(
                    Notification(command: 0, identifier: 0, expiry: nil, token: token, payload: payload, priority: nil),
                    length: bytes.count))
    }

    @Test func commandOneAddsAnIdentifierAndAnExpiry() {
        let bytes = enhanced(id: 0x0102_0304, expiry: 1_800_000_000)
        #expect(
            LegacyFrameReader.next(bytes)
                == .notification(
                    Notification(
                        command: 1, identifier: 0x0102_0304, expiry: 1_800_000_000, token: token, payload: payload,
                        priority: nil), length: bytes.count))
    }

    @Test func commandTwoReadsEveryItemInAnyOrder() {
        let bytes = LegacyBytes.frame(items(id: 42, expiry: 99, priority: 5).reversed())
        #expect(
            LegacyFrameReader.next(bytes)
                == .notification(
                    Notification(command: 2, identifier: 42, expiry: 99, token: token, payload: payload, priority: 5),
                    length: bytes.count))
        // Only the token and the payload are needed.
        let least = LegacyBytes.frame([LegacyBytes.item(2, payload), LegacyBytes.item(1, token)])
        #expect(
            LegacyFrameReader.next(least)
                == .notification(
                    Notification(command: 2, identifier: 0, expiry: nil, token: token, payload: payload, priority: nil),
                    length: least.count))
    }

    @Test func aFrameCutAnywhereWaitsForTheRest() {
        for bytes in [simple(), enhanced(id: 1, expiry: 0), LegacyBytes.frame(items())] {
            for cut in 0..<bytes.count {
                #expect(LegacyFrameReader.next(Array(bytes[..<cut])) == .needMore, "cut at \(cut) of \(bytes[0])")
            }
        }
    }

    @Test func theNextCommandStartsWhereTheLastEnded() {
        let first = enhanced(id: 1, expiry: 0)
        let stream = first + [0xEE, 0x00]
        guard case .notification(_, let length) = LegacyFrameReader.next(stream) else {
            Issue.record("the first notification was not read")
            return
        }
        #expect(length == first.count)
        // Garbage after a good notification is a protocol error with no identifier.
        #expect(LegacyFrameReader.next(stream[length...]) == refused(.protocolError, 0))
    }

    @Test(arguments: [3, 4, 7, 8, 9, 128, 255] as [UInt8])
    func anUnknownCommandIsAProtocolError(command: UInt8) {
        #expect(LegacyFrameReader.next([command, 0, 0, 0]) == refused(.protocolError, 0))
    }

    @Test func commandsZeroAndOneCheckTheirLengthsAsTheyArrive() {
        #expect(LegacyFrameReader.next(simple(token: [])) == refused(.missingDeviceToken, 0))
        #expect(LegacyFrameReader.next(simple(token: Array(token.prefix(31)))) == refused(.invalidTokenSize, 0))
        #expect(LegacyFrameReader.next(simple(payload: [])) == refused(.missingPayload, 0))
        #expect(LegacyFrameReader.next(enhanced(id: 5, expiry: 0, token: [])) == refused(.missingDeviceToken, 5))
        #expect(LegacyFrameReader.next(enhanced(id: 6, expiry: 0, payload: [])) == refused(.missingPayload, 6))
        // 256 bytes is the limit of these commands; 257 is refused from the length alone.
        let largest = [UInt8](repeating: 0x20, count: 256)
        #expect(LegacyFrameReader.next(enhanced(id: 7, expiry: 0, payload: largest)).isNotification)
        let oversized = enhanced(id: 8, expiry: 0, payload: largest + [0x20])
        #expect(LegacyFrameReader.next(Array(oversized.prefix(1 + 8 + 2 + 32 + 2))) == refused(.invalidPayloadSize, 8))
        // A token length other than 32 is refused before its bytes come.
        #expect(
            LegacyFrameReader.next([1] + LegacyBytes.be32(9) + LegacyBytes.be32(0) + LegacyBytes.be16(64))
                == refused(.invalidTokenSize, 9))
    }

    @Test func commandTwoNamesTheIdentifierInEveryRefusal() {
        let id = LegacyBytes.item(3, LegacyBytes.be32(77))
        let cases: [([[UInt8]], LegacyStatus)] = [
            ([LegacyBytes.item(2, payload), id], .missingDeviceToken),
            ([LegacyBytes.item(1, []), LegacyBytes.item(2, payload), id], .missingDeviceToken),
            ([LegacyBytes.item(1, token + [0]), LegacyBytes.item(2, payload), id], .invalidTokenSize),
            ([LegacyBytes.item(1, token), id], .missingPayload),
            ([LegacyBytes.item(1, token), LegacyBytes.item(2, []), id], .missingPayload),
            (
                [LegacyBytes.item(1, token), LegacyBytes.item(2, [UInt8](repeating: 0x20, count: 2049)), id],
                .invalidPayloadSize
            ),
            // An item repeated, an unknown item, an item of the wrong size or value: not Apple's frame.
            (
                [LegacyBytes.item(1, token), LegacyBytes.item(1, token), LegacyBytes.item(2, payload), id],
                .protocolError
            ),
            ([LegacyBytes.item(1, token), LegacyBytes.item(2, payload), LegacyBytes.item(6, [1]), id], .protocolError),
            (
                [LegacyBytes.item(1, token), LegacyBytes.item(2, payload), LegacyBytes.item(4, [0, 0]), id],
                .protocolError
            ),
            ([LegacyBytes.item(1, token), LegacyBytes.item(2, payload), LegacyBytes.item(5, [7]), id], .protocolError),
            (
                [LegacyBytes.item(1, token), LegacyBytes.item(2, payload), LegacyBytes.item(5, [10, 10]), id],
                .protocolError
            ),
        ]
        for (items, status) in cases {
            #expect(LegacyFrameReader.next(LegacyBytes.frame(items)) == refused(status, 77), "\(status)")
        }
        // 2,048 bytes is command 2's limit.
        let largest = LegacyBytes.frame([
            LegacyBytes.item(1, token), LegacyBytes.item(2, [UInt8](repeating: 0x20, count: 2048)),
        ])
        #expect(LegacyFrameReader.next(largest).isNotification)
    }

    @Test func anItemThatRunsPastItsFrameOrAFrameBeyondTheLargestIsAProtocolError() {
        var cut = LegacyBytes.frame([LegacyBytes.item(1, token), LegacyBytes.item(2, payload)])
        cut[4] -= 1  // the frame ends one byte inside the payload item
        #expect(LegacyFrameReader.next(cut) == refused(.protocolError, 0))
        let huge = [2] + LegacyBytes.be32(UInt32(LegacyFrameReader.largestFrame + 1))
        #expect(LegacyFrameReader.next(huge) == refused(.protocolError, 0))
        #expect(LegacyFrameReader.next([2] + LegacyBytes.be32(UInt32.max)) == refused(.protocolError, 0))
    }

    @Test func theErrorResponseIsSixBigEndianBytes() {
        #expect(LegacyErrorResponse(status: .invalidToken, identifier: 0x0A0B_0C0D).bytes == [8, 8, 10, 11, 12, 13])
        #expect(LegacyErrorResponse(status: .shutdown, identifier: 1).bytes == [8, 10, 0, 0, 0, 1])
        #expect(LegacyStatus.allCases.map(\.rawValue) == [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 128, 255])
    }
}

extension LegacyFrameReader.Step {
    var isNotification: Bool {
        if case .notification = self { true } else { false }
    }
}
