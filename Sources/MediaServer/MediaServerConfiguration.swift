import Foundation
import HTTPServiceSupport
import Recording

/// The MAMP box: which folder it serves, where, and how fast.
public struct MediaServerConfiguration: Sendable {
    public var host = "127.0.0.1"
    /// The tutorial's MAMP virtual host listens on 44447.
    public var port = 44447
    public var root: URL
    /// Rates and delays at start-up; changeable at run time through the control API.
    public var settings = MediaServerSettings()
    /// Bytes per second for each connection; nil for no limit (``settings``' own field).
    public var throttleBytesPerSecond: Int? {
        get { settings.throttleBytesPerSecond }
        set { settings.throttleBytesPerSecond = newValue }
    }
    /// The control API (plain HTTP/1.1); 0 picks a free port.
    public var controlPort = 0
    /// Where the Apache "combined" access log is appended; nil for none.
    public var accessLog: URL?
    /// Fault rules in force from the start; more can be added through the control API.
    public var faults: [MediaFault] = []
    /// A connection on which no complete request arrives within this (after opening, or after its
    /// last response) is closed: Apache's `Timeout` is 60 s.
    public var requestTimeout: Duration = .seconds(60)
    /// Connections and header fields: a connection over `maxConnections` is closed as it opens, a
    /// request with more than `maxHeaderFields` gets `400` (as Apache's `LimitRequestFields`). The
    /// control API holds its clients to the same limits, idle ones closed after `idleTimeout`.
    public var limits = HTTPLimits()
    /// Records every exchange (request, response, the time and size of each body write, the fault that
    /// fired) into a cassette; nil records nothing.
    public var recorder: CassetteRecorder?
    /// Answers from a cassette instead of the folder: recorded statuses, headers and bytes, paced and
    /// cut as recorded. Fault rules and throttles do not apply then: the recording has them.
    public var replay: MediaReplay?
    /// A server the media server stands in front of: requests it has no recorded answer for (all of
    /// them when not replaying) are forwarded there, and recorded when a ``recorder`` is set.
    public var upstream: MediaUpstream?

    public init(root: URL) { self.root = root }
}
