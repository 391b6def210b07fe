import CNGHTTP2
import Foundation

/// What ``ProviderConnectionHandler`` writes, submitted to a server session of nghttp2, which sends it
/// when next asked for its bytes: a response's header fields wait for its body, and the body is kept
/// here until nghttp2 reads it through a data provider (``readBody(stream:into:length:flags:)``).
struct NGHTTP2Outbound {
    /// A part nghttp2 did not take.
    struct Refused: Error, CustomStringConvertible {
        /// nghttp2's error code.
        var code: Int32
        var description: String { String(cString: nghttp2_strerror(code)) }
    }

    /// Response fields waiting for the body they go with, and response bodies being sent, by stream.
    private var heldHeads: [Int32: [(name: String, value: String)]] = [:]
    private var bodies: [Int32: Data] = [:]
    private var nameValues = NGHTTP2NameValues()

    /// Submits `part`; returns the `MAX_CONCURRENT_STREAMS` a SETTINGS part carries, nil for any other.
    mutating func submit(_ part: ProviderOutboundPart, to session: OpaquePointer) throws(Refused) -> UInt32? {
        var result: Int32 = 0
        var limit: UInt32?
        switch part {
        case .head(let fields, let stream, let end):
            if end {
                result = nameValues.with(fields) { nva, count in
                    nghttp2_submit_response(session, stream, nva, count, nil)
                }
            } else {
                heldHeads[stream] = fields
            }
        case .body(let bytes, let stream):
            // One body a response: ProviderConnectionHandler writes an answer's body once.
            bodies[stream] = bytes
            result = submitBody(of: stream, session: session)
        case .reset(let stream):
            result = nghttp2_submit_rst_stream(
                session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream, NGHTTP2_PROTOCOL_ERROR.rawValue)
        case .maxConcurrentStreams(let value):
            var entry = nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), value: value)
            result = nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &entry, 1)
            limit = value
        case .goAway(let reason):
            let debug = Array(#"{"reason":"\#(reason)"}"#.utf8)
            result = debug.withUnsafeBufferPointer {
                nghttp2_submit_goaway(
                    session, UInt8(NGHTTP2_FLAG_NONE.rawValue), Int32.max, NGHTTP2_NO_ERROR.rawValue, $0.baseAddress,
                    $0.count)
            }
        }
        guard result >= 0 else { throw Refused(code: result) }
        return limit
    }

    /// The response body of `stream`, sent from ``bodies`` through a data provider, after its held
    /// fields if any.
    private mutating func submitBody(of stream: Int32, session: OpaquePointer) -> Int32 {
        var provider = nghttp2_data_provider(
            source: nghttp2_data_source(ptr: nil), read_callback: NGHTTP2Wire.readBodyCallback)
        if let fields = heldHeads.removeValue(forKey: stream) {
            return nameValues.with(fields) { nva, count in
                nghttp2_submit_response(session, stream, nva, count, &provider)
            }
        }
        return nghttp2_submit_data(session, UInt8(NGHTTP2_FLAG_END_STREAM.rawValue), stream, &provider)
    }

    /// Copies up to `length` bytes of `stream`'s body into `buffer`; the end of the body ends the stream.
    mutating func readBody(stream: Int32, into buffer: UnsafeMutablePointer<UInt8>, length: Int, flags: inout UInt32)
        -> Int
    {
        guard let body = bodies.removeValue(forKey: stream) else {
            flags |= NGHTTP2_DATA_FLAG_EOF.rawValue
            return 0
        }
        let count = min(length, body.count)
        body.copyBytes(to: buffer, count: count)
        if count == body.count {
            flags |= NGHTTP2_DATA_FLAG_EOF.rawValue
        } else {
            bodies[stream] = body.dropFirst(count)
        }
        return count
    }

    /// `stream` is closed: what it still had to send goes.
    mutating func closed(_ stream: Int32) {
        heldHeads[stream] = nil
        bodies[stream] = nil
    }
}
