import Foundation
import Recording

/// A cassette the media server answers from, and how requests are matched to its entries.
public struct MediaReplay: Sendable {
    public var cassette: Cassette
    public var matching: RequestMatching

    public init(cassette: Cassette, matching: RequestMatching = RequestMatching()) {
        self.cassette = cassette
        self.matching = matching
    }

    /// The header that marks the answer to a request the cassette does not hold.
    public static let notRecordedHeader = "X-PushHarness-Not-Recorded"
    /// The status of that answer: the recording is the upstream, and it had nothing to give.
    public static let notRecordedStatus = 502
}

/// The server a recording reverse proxy forwards to.
public struct MediaUpstream: Sendable {
    /// `http://host:port` with an optional path prefix; a request's target is appended to it.
    public var url: String
    /// How long a forwarded request may take, first byte to last.
    public var timeout: Duration

    public init(url: String, timeout: Duration = .seconds(60)) {
        self.url = url.hasSuffix("/") ? String(url.dropLast()) : url
        self.timeout = timeout
    }

    /// The header that says the upstream could not be reached, on the 502 given instead.
    public static let errorHeader = "X-PushHarness-Upstream-Error"
}
