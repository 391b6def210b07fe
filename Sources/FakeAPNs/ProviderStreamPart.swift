import Foundation

/// What ``NGHTTP2ServerHandler`` hands ``ProviderConnectionHandler`` about a request stream, in the
/// order nghttp2 read it: a stream's header blocks (the request's, then any trailers), its body's
/// DATA frames, and the stream's end. Header fields come as the strings the provider API reads, and
/// bodies as the `Data` it reads, with no HTTP/2 frame or HPACK list around them.
///
/// A part fits in `NIOAny`'s inline storage (three words: hence the body before the stream), so
/// handing one up the pipeline allocates nothing.
enum ProviderStreamPart {
    /// A header block; `end`: the request is complete with it.
    case headers(fields: [(name: String, value: String)], stream: Int32, end: Bool)
    /// A DATA frame's payload; `end`: the request is complete with it.
    case data(Data, stream: Int32, end: Bool)
    /// The stream is closed, answered or not: answered, reset by the provider, or reset by nghttp2 for
    /// an error.
    case closed(stream: Int32)
}

/// What ``ProviderConnectionHandler`` and ``ConnectionGoAway`` write down to ``NGHTTP2ServerHandler``:
/// answers, resets and the connection's own frames, as the values FakeAPNs decides, which nghttp2
/// makes into frames. Like ``ProviderStreamPart``, a part fits in `NIOAny`'s inline storage.
enum ProviderOutboundPart {
    /// A response's header fields, `:status` first; `end`: the response has no body. `apns-id` and
    /// `apns-unique-id`, new in every answer, are sent without indexing.
    case head(fields: [(name: String, value: String)], stream: Int32, end: Bool)
    /// A response's body, which ends its stream.
    case body(Data, stream: Int32)
    /// RST_STREAM `PROTOCOL_ERROR`.
    case reset(stream: Int32)
    /// A SETTINGS frame raising `SETTINGS_MAX_CONCURRENT_STREAMS`.
    case maxConcurrentStreams(UInt32)
    /// GOAWAY `NO_ERROR` with `{"reason": …}` as its debug data, as APNs ends a connection.
    case goAway(reason: String)
}

extension ProviderOutboundPart {
    /// The stream the part is for; nil for the connection's own frames.
    var stream: Int32? {
        switch self {
        case .head(_, let stream, _), .body(_, let stream), .reset(let stream): return stream
        case .maxConcurrentStreams, .goAway: return nil
        }
    }
}
