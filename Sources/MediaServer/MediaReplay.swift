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
