import CNGHTTP2
import NIOCore
import NIOHTTP2

/// Between NIOHTTP2's settings and nghttp2's C ones, nghttp2's callbacks, and the limit written over
/// nghttp2's in the preface (``NGHTTP2ServerHandler``).
enum NGHTTP2Wire {

    /// `settings` as nghttp2's entries; nil when a value does not fit a setting's 32 bits.
    static func entries(_ settings: [HTTP2Setting]) -> [nghttp2_settings_entry]? {
        var entries: [nghttp2_settings_entry] = []
        for setting in settings {
            guard let value = UInt32(exactly: setting.value) else { return nil }
            entries.append(nghttp2_settings_entry(settings_id: Int32(identifier(of: setting.parameter)), value: value))
        }
        return entries
    }

    /// The `MAX_CONCURRENT_STREAMS` among `settings`, if any.
    static func limit(in settings: [HTTP2Setting]) -> UInt32? {
        settings.last { $0.parameter == .maxConcurrentStreams }.flatMap { UInt32(exactly: $0.value) }
    }

    /// Writes `limit` over the `MAX_CONCURRENT_STREAMS` value of the SETTINGS frame of `count` bytes at
    /// `start` in `out` (a 9-byte frame header, then 6-byte entries: identifier, value).
    static func writeLimit(
        _ limit: UInt32, intoSettingsFrameAt start: Int, count: Int, of out: inout ByteBuffer
    ) {
        guard count >= 9, (count - 9) % 6 == 0, out.getInteger(at: start + 3, as: UInt8.self) == 4 else { return }
        for entry in stride(from: start + 9, to: start + count, by: 6)
        where out.getInteger(at: entry, as: UInt16.self) == 3 {
            out.setInteger(limit, at: entry + 2)
        }
    }

    /// The setting's identifier on the wire (RFC 9113 section 6.5.2).
    static func identifier(of parameter: HTTP2SettingsParameter) -> Int {
        switch parameter {
        case .headerTableSize: 1
        case .enablePush: 2
        case .maxConcurrentStreams: 3
        case .initialWindowSize: 4
        case .maxFrameSize: 5
        case .maxHeaderListSize: 6
        case .enableConnectProtocol: 8
        default: 0
        }
    }
}

extension NGHTTP2Wire {
    // nghttp2's callbacks: C functions that find the handler in `user_data` and return to nghttp2 at once.

    static let onBeginHeaders: nghttp2_on_begin_headers_callback = { _, frame, userData in
        guard let frame, UInt32(frame.pointee.hd.type) == NGHTTP2_HEADERS.rawValue else { return 0 }
        let stream = frame.pointee.hd.stream_id
        let request = frame.pointee.headers.cat.rawValue == NGHTTP2_HCAT_REQUEST.rawValue
        return NGHTTP2ServerHandler.with(userData) { handler in
            guard request else {
                handler.beginTrailers(stream: stream)
                return 0
            }
            return handler.beginRequest(stream: stream) ? 0 : NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue
        }
    }

    static let onHeader: nghttp2_on_header_callback = {
        _, frame, name, nameLength, value, valueLength, _, userData in
        guard let frame, let name, let value else { return 0 }
        let kept = NGHTTP2ServerHandler.with(userData) {
            $0.header(
                stream: frame.pointee.hd.stream_id, name: UnsafeBufferPointer(start: name, count: nameLength),
                value: UnsafeBufferPointer(start: value, count: valueLength))
        }
        return kept ? 0 : NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue
    }

    static let onFrameSent: nghttp2_on_frame_send_callback = { _, frame, userData in
        guard let frame else { return 0 }
        NGHTTP2ServerHandler.with(userData) { $0.frameSent(frame) }
        return 0
    }

    static let onError: nghttp2_error_callback2 = { _, _, message, length, userData in
        guard let message else { return 0 }
        let text = String(
            decoding: UnsafeRawBufferPointer(start: message, count: length).bindMemory(to: UInt8.self), as: UTF8.self)
        NGHTTP2ServerHandler.with(userData) { $0.errorReported(text) }
        return 0
    }

    static let onDataChunk: nghttp2_on_data_chunk_recv_callback = { _, _, stream, data, length, userData in
        guard let data else { return 0 }
        NGHTTP2ServerHandler.with(userData) {
            $0.dataChunk(stream: stream, UnsafeRawBufferPointer(start: data, count: length))
        }
        return 0
    }

    static let onFrame: nghttp2_on_frame_recv_callback = { _, frame, userData in
        guard let frame else { return 0 }
        NGHTTP2ServerHandler.with(userData) { $0.frameReceived(frame) }
        return 0
    }

    static let onStreamClose: nghttp2_on_stream_close_callback = { _, stream, code, userData in
        NGHTTP2ServerHandler.with(userData) { $0.streamClosed(stream, code: code) }
        return 0
    }

    static let readBodyCallback: nghttp2_data_source_read_callback = { _, stream, buffer, length, flags, _, userData in
        guard let buffer, let flags else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
        var raised = flags.pointee
        let count = NGHTTP2ServerHandler.with(userData) {
            $0.readBody(stream: stream, into: buffer, length: length, flags: &raised)
        }
        flags.pointee = raised
        return count
    }
}

/// Response fields as nghttp2's name-value pairs (which nghttp2 copies before it returns), laid out in
/// buffers a connection reuses for every response. `apns-id` and `apns-unique-id` are new in every
/// answer: they are marked NO_INDEX, as HPACK would only churn its dynamic table indexing them.
struct NGHTTP2NameValues {
    private var bytes: [UInt8] = []
    private var pairs: [nghttp2_nv] = []

    static func isIndexed(_ name: String) -> Bool { name != "apns-id" && name != "apns-unique-id" }

    mutating func with(
        _ fields: [(name: String, value: String)], _ body: (UnsafePointer<nghttp2_nv>, Int) -> Int32
    ) -> Int32 {
        guard !fields.isEmpty else { return NGHTTP2_ERR_INVALID_ARGUMENT.rawValue }
        // Taken out of `self` while in use, so that neither is copied.
        var bytes = self.bytes
        var pairs = self.pairs
        self.bytes = []
        self.pairs = []
        defer {
            bytes.removeAll(keepingCapacity: true)
            pairs.removeAll(keepingCapacity: true)
            self.bytes = bytes
            self.pairs = pairs
        }
        for (name, value) in fields {
            bytes.append(contentsOf: name.utf8)
            bytes.append(contentsOf: value.utf8)
        }
        // Never empty, so that every pointer is a real one (an empty value points at a byte it does not read).
        bytes.append(0)
        return bytes.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            var offset = 0
            for (name, value) in fields {
                let nameCount = name.utf8.count
                let valueCount = value.utf8.count
                let flag = Self.isIndexed(name) ? NGHTTP2_NV_FLAG_NONE.rawValue : NGHTTP2_NV_FLAG_NO_INDEX.rawValue
                pairs.append(
                    nghttp2_nv(
                        name: base + offset, value: base + offset + nameCount, namelen: nameCount,
                        valuelen: valueCount, flags: UInt8(flag)))
                offset += nameCount + valueCount
            }
            return pairs.withUnsafeBufferPointer { body($0.baseAddress!, $0.count) }
        }
    }
}
