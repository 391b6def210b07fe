import CNGHTTP2
import NIOCore
import NIOHPACK
import NIOHTTP2

/// The frames ``ProviderConnectionHandler`` writes, submitted to a server session of nghttp2, which
/// sends them when next asked for its bytes: a response's HEADERS wait for its DATA, and its body is
/// kept here until nghttp2 reads it through a data provider (``readBody(stream:into:length:flags:)``).
struct NGHTTP2Outbound {
    /// A frame nghttp2 did not take.
    struct Refused: Error, CustomStringConvertible {
        var description: String
    }

    /// Response HEADERS waiting for the DATA they go with, and response bodies being sent, by stream.
    private var heldHeaders: [Int32: HPACKHeaders] = [:]
    private var bodies: [Int32: ByteBuffer] = [:]
    private var nameValues = NGHTTP2NameValues()

    /// Submits `frame`; returns the `MAX_CONCURRENT_STREAMS` a SETTINGS frame carries (`.some(nil)`: a
    /// SETTINGS frame without it), nil for any other frame. Window updates are dropped: nghttp2 sends
    /// its own, at half the window.
    mutating func submit(_ frame: HTTP2Frame, to session: OpaquePointer) throws(Refused) -> UInt32?? {
        let stream = Int32(frame.streamID)
        var result: Int32 = 0
        var settingsLimit: UInt32?? = nil
        switch frame.payload {
        case .headers(let headers):
            if headers.endStream {
                result = nameValues.with(headers.headers) { nva, count in
                    nghttp2_submit_response(session, stream, nva, count, nil)
                }
            } else {
                heldHeaders[stream] = headers.headers
            }
        case .data(let payload):
            guard case .byteBuffer(var bytes) = payload.data else {
                throw Refused(description: "file regions are not sent over HTTP/2 here")
            }
            if bodies[stream] == nil {
                bodies[stream] = bytes
            } else {
                bodies[stream]!.writeBuffer(&bytes)
            }
            if payload.endStream { result = submitBody(of: stream, session: session) }
        case .rstStream(let code):
            result = nghttp2_submit_rst_stream(
                session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream, UInt32(truncatingIfNeeded: code.networkCode))
        case .settings(.settings(let settings)):
            guard let entries = NGHTTP2Wire.entries(settings) else {
                throw Refused(description: "a setting's value is out of range")
            }
            result = entries.withUnsafeBufferPointer {
                nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), $0.baseAddress, $0.count)
            }
            settingsLimit = .some(NGHTTP2Wire.limit(in: settings))
        case .goAway(let last, let code, let opaque):
            var debug = opaque ?? ByteBuffer()
            let bytes = debug.readBytes(length: debug.readableBytes) ?? []
            result = bytes.withUnsafeBufferPointer {
                nghttp2_submit_goaway(
                    session, UInt8(NGHTTP2_FLAG_NONE.rawValue), Int32(last),
                    UInt32(truncatingIfNeeded: code.networkCode), $0.baseAddress, $0.count)
            }
        case .ping(let data, let ack):
            guard !ack else { break }
            var payload = data.bytes
            result = withUnsafeBytes(of: &payload) { raw in
                nghttp2_submit_ping(
                    session, UInt8(NGHTTP2_FLAG_NONE.rawValue), raw.baseAddress?.assumingMemoryBound(to: UInt8.self))
            }
        default:
            break
        }
        guard result >= 0 else { throw Refused(description: String(cString: nghttp2_strerror(result))) }
        return settingsLimit
    }

    /// The response body of `stream`, sent from ``bodies`` through a data provider, after its held
    /// HEADERS if any.
    private mutating func submitBody(of stream: Int32, session: OpaquePointer) -> Int32 {
        var provider = nghttp2_data_provider(
            source: nghttp2_data_source(ptr: nil), read_callback: NGHTTP2Wire.readBodyCallback)
        if let headers = heldHeaders.removeValue(forKey: stream) {
            return nameValues.with(headers) { nva, count in
                nghttp2_submit_response(session, stream, nva, count, &provider)
            }
        }
        return nghttp2_submit_data(session, UInt8(NGHTTP2_FLAG_END_STREAM.rawValue), stream, &provider)
    }

    /// Copies up to `length` bytes of `stream`'s body into `buffer`; the end of the body ends the stream.
    mutating func readBody(stream: Int32, into buffer: UnsafeMutablePointer<UInt8>, length: Int, flags: inout UInt32)
        -> Int
    {
        guard var body = bodies.removeValue(forKey: stream) else {
            flags |= NGHTTP2_DATA_FLAG_EOF.rawValue
            return 0
        }
        let count = min(length, body.readableBytes)
        if count > 0 {
            body.withUnsafeReadableBytes { raw in
                UnsafeMutableRawPointer(buffer).copyMemory(from: raw.baseAddress!, byteCount: count)
            }
        }
        body.moveReaderIndex(forwardBy: count)
        if body.readableBytes == 0 {
            flags |= NGHTTP2_DATA_FLAG_EOF.rawValue
        } else {
            bodies[stream] = body
        }
        return count
    }

    /// `stream` is closed: what it still had to send goes.
    mutating func closed(_ stream: Int32) {
        heldHeaders[stream] = nil
        bodies[stream] = nil
    }
}
