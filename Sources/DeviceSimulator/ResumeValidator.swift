import Foundation

/// What a response tells nsurlsessiond about resuming its download (docs/ios-rules.md U11): a lost connection can
/// be resumed with `Range` and `If-Range` only when the server offers byte ranges and named a
/// validator (a strong `ETag`, else `Last-Modified`).
struct ResumeValidator: Equatable, Sendable {
    /// The server sent `Accept-Ranges: bytes`.
    var acceptsRanges: Bool
    /// What `If-Range` carries: the strong ETag, or the Last-Modified date.
    var validator: String?

    init(acceptRanges: String?, etag: String?, lastModified: String?) {
        acceptsRanges =
            acceptRanges?.split(separator: ",").contains {
                $0.trimmingCharacters(in: .whitespaces).lowercased() == "bytes"
            } ?? false
        // A weak ETag cannot be used in If-Range (RFC 9110 §13.1.5).
        if let etag, !etag.hasPrefix("W/"), etag.hasPrefix("\"") {
            validator = etag
        } else {
            validator = lastModified
        }
    }

    /// Why a lost connection cannot be resumed and the download must start over; nil when it can.
    var whyNotResumable: String? {
        switch (acceptsRanges, validator) {
        case (false, nil): "the server sent no Accept-Ranges: bytes and neither an ETag nor a Last-Modified"
        case (false, _): "the server sent no Accept-Ranges: bytes"
        case (true, nil): "the server sent neither a strong ETag nor a Last-Modified to resume against"
        case (true, _): nil
        }
    }
}

/// The start of a `Content-Range: bytes first-last/complete` header, and the complete length
/// (nil when `*`).
struct ContentRange: Equatable {
    var first: Int64
    var last: Int64
    var complete: Int64?

    init?(_ header: String) {
        guard header.hasPrefix("bytes ") else { return nil }
        let parts = header.dropFirst("bytes ".count).split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let bounds = parts[0].split(separator: "-", maxSplits: 1)
        guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]), first <= last else {
            return nil
        }
        self.first = first
        self.last = last
        if parts[1] == "*" {
            complete = nil
        } else {
            guard let complete = Int64(parts[1]), complete > last else { return nil }
            self.complete = complete
        }
    }
}
