/// Apple's legacy binary provider interface (`gateway.push.apple.com:2195`, retired in 2021) read as a
/// value: the next command from the bytes a connection has sent, as a notification to hand on, or as
/// the error response APNs sends before it closes the connection. Commands 0 (simple), 1 (enhanced)
/// and 2 (the frame of items) are read; any other byte is a protocol error.
///
/// Every length is checked against Apple's limits as soon as it is read, so a connection never makes
/// the gateway hold more than one frame's worth (``largestFrame``) of its bytes.
enum LegacyFrameReader {
    /// One notification as it came, before the gateway's own rules (is the token known, is the
    /// payload JSON).
    struct Notification: Equatable, Sendable {
        var command: UInt8
        /// Command 1's identifier, or item 3; 0 when there is none.
        var identifier: UInt32
        /// Epoch seconds; 0 means "do not store". Nil when not given (command 0, or no item 4).
        var expiry: UInt32?
        var token: [UInt8]
        var payload: [UInt8]
        /// Item 5: 10 or 5. Nil when not given (APNs assumes 10).
        var priority: UInt8?
    }

    enum Step: Equatable, Sendable {
        /// A whole notification, and the bytes it took.
        case notification(Notification, length: Int)
        /// The bytes cannot be a notification: answer this, then close.
        case refused(LegacyErrorResponse)
        /// The command is not complete yet.
        case needMore
    }

    /// Apple's device token is 32 bytes; item 1 allows up to 100 for tokens that never came.
    static let tokenLength = 32
    /// Payload limits: 256 bytes in commands 0 and 1, 2 KB in command 2.
    static let simplePayloadLimit = 256
    static let framePayloadLimit = 2048
    /// The largest frame of command 2 read: its five items at their largest, the payload's far beyond
    /// its limit so that an oversized payload is answered `invalidPayloadSize`, not `protocolError`.
    static let largestFrame = 3 + 100 + 3 + 65_535 + 3 + 4 + 3 + 4 + 3 + 1

    /// Reads the command at the start of `bytes`.
    static func next(_ bytes: [UInt8]) -> Step {
        next(bytes[...])
    }

    static func next(_ bytes: ArraySlice<UInt8>) -> Step {
        var reader = Reader(bytes)
        guard let command = reader.byte() else { return .needMore }
        switch command {
        case 0, 1: return simple(command, &reader)
        case 2: return frame(&reader)
        default: return .refused(LegacyErrorResponse(status: .protocolError, identifier: 0))
        }
    }

    /// Commands 0 and 1: `| 0 | tokenLen | token | payloadLen | payload |`, and command 1 with an
    /// identifier and an expiry after the command byte.
    private static func simple(_ command: UInt8, _ reader: inout Reader) -> Step {
        var identifier: UInt32 = 0
        var expiry: UInt32?
        if command == 1 {
            guard let id = reader.uint32(), let expires = reader.uint32() else { return .needMore }
            identifier = id
            expiry = expires
        }
        func refuse(_ status: LegacyStatus) -> Step {
            .refused(LegacyErrorResponse(status: status, identifier: identifier))
        }
        guard let tokenLength = reader.uint16() else { return .needMore }
        if tokenLength == 0 { return refuse(.missingDeviceToken) }
        if tokenLength != tokenLength32 { return refuse(.invalidTokenSize) }
        guard let token = reader.bytes(Int(tokenLength)), let payloadLength = reader.uint16() else { return .needMore }
        if payloadLength == 0 { return refuse(.missingPayload) }
        if payloadLength > simplePayloadLimit { return refuse(.invalidPayloadSize) }
        guard let payload = reader.bytes(Int(payloadLength)) else { return .needMore }
        let notification = Notification(
            command: command, identifier: identifier, expiry: expiry, token: token, payload: payload, priority: nil)
        return .notification(notification, length: reader.offset)
    }

    private static let tokenLength32 = UInt16(tokenLength)

    /// Command 2: `| 2 | frameLength | items |`, each item `| id | length | data |`.
    private static func frame(_ reader: inout Reader) -> Step {
        guard let frameLength = reader.uint32() else { return .needMore }
        guard frameLength <= largestFrame else {
            return .refused(LegacyErrorResponse(status: .protocolError, identifier: 0))
        }
        guard let data = reader.bytes(Int(frameLength)) else { return .needMore }
        var items = Reader(data[...])
        var seen: Set<UInt8> = []
        var notification = Notification(command: 2, identifier: 0, expiry: nil, token: [], payload: [], priority: nil)
        var tokenLength: Int?
        var payloadLength: Int?
        var malformed = false
        // Every item is read first, so that an error names the notification's identifier wherever it is.
        while !items.isAtEnd {
            guard let id = items.byte(), let length = items.uint16(), let value = items.bytes(Int(length)) else {
                malformed = true  // an item runs past the frame
                break
            }
            // Each item at most once (Apple: "exactly one" token and payload); an unknown item is not Apple's.
            guard seen.insert(id).inserted else {
                malformed = true
                continue
            }
            switch (id, value.count) {
            case (1, _):
                tokenLength = value.count
                notification.token = value
            case (2, _):
                payloadLength = value.count
                notification.payload = value
            case (3, 4): notification.identifier = Reader.uint32(value)
            case (4, 4): notification.expiry = Reader.uint32(value)
            case (5, 1) where value[0] == 10 || value[0] == 5: notification.priority = value[0]
            default: malformed = true
            }
        }
        func refuse(_ status: LegacyStatus) -> Step {
            .refused(LegacyErrorResponse(status: status, identifier: notification.identifier))
        }
        if malformed { return refuse(.protocolError) }
        guard let tokenLength, tokenLength > 0 else { return refuse(.missingDeviceToken) }
        guard tokenLength == Self.tokenLength else { return refuse(.invalidTokenSize) }
        guard let payloadLength, payloadLength > 0 else { return refuse(.missingPayload) }
        guard payloadLength <= framePayloadLimit else { return refuse(.invalidPayloadSize) }
        return .notification(notification, length: reader.offset)
    }

    /// Big-endian reads from the front of a slice, each nil when the bytes are not there yet.
    private struct Reader {
        private let bytes: ArraySlice<UInt8>
        private var index: Int

        init(_ bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            index = bytes.startIndex
        }

        var offset: Int { index - bytes.startIndex }
        var isAtEnd: Bool { index == bytes.endIndex }

        mutating func byte() -> UInt8? {
            guard index < bytes.endIndex else { return nil }
            defer { index += 1 }
            return bytes[index]
        }

        mutating func bytes(_ count: Int) -> [UInt8]? {
            guard bytes.endIndex - index >= count else { return nil }
            defer { index += count }
            return Array(bytes[index..<index + count])
        }

        mutating func uint16() -> UInt16? {
            bytes(2).map { UInt16($0[0]) << 8 | UInt16($0[1]) }
        }

        mutating func uint32() -> UInt32? { bytes(4).map(Self.uint32) }

        static func uint32(_ four: [UInt8]) -> UInt32 {
            four.reduce(0) { $0 << 8 | UInt32($1) }
        }
    }
}
