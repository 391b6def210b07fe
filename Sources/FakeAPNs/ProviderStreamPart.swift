import NIOCore

/// What ``NGHTTP2ServerHandler`` hands ``ProviderConnectionHandler`` about a request stream, in the
/// order nghttp2 read it: a stream's header blocks (the request's, then any trailers), its body's
/// DATA frames, and the stream's end. Header fields come as the strings
/// the provider API reads, with no HTTP/2 frame or HPACK list around them.
enum ProviderStreamPart {
    /// A header block; `end`: the request is complete with it.
    case headers(stream: Int32, fields: [(name: String, value: String)], end: Bool)
    /// A DATA frame's payload; `end`: the request is complete with it.
    case data(stream: Int32, bytes: ByteBuffer, end: Bool)
    /// The stream is closed, answered or not: answered, reset by the provider, or reset by nghttp2 for
    /// an error.
    case closed(stream: Int32)
}
