/// A single `Range: bytes=…` request resolved against a resource's length (RFC 9110 §14).
public enum ByteRangeRequest: Equatable, Sendable {
    /// No usable range: serve the whole body with `200`.
    case whole
    /// Serve these bytes with `206`.
    case partial(ClosedRange<Int>)
    /// Nothing satisfiable: `416` with `Content-Range: bytes */<length>`.
    case unsatisfiable

    /// Parses one `Range` header value. A multi-range or malformed header is ignored (whole body), as
    /// RFC 9110 allows.
    public init(header: String?, length: Int) {
        guard let header, header.lowercased().hasPrefix("bytes=") else {
            self = .whole
            return
        }
        let spec = header.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else {
            self = .whole
            return
        }
        let first = spec[..<dash].trimmingCharacters(in: .whitespaces)
        let last = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        if first.isEmpty {
            guard let suffix = Int(last) else {
                self = .whole
                return
            }
            guard suffix > 0, length > 0 else {
                self = .unsatisfiable
                return
            }
            self = .partial(max(0, length - suffix)...(length - 1))
            return
        }
        guard let start = Int(first), start >= 0 else {
            self = .whole
            return
        }
        let end: Int
        if last.isEmpty {
            end = Int.max
        } else {
            guard let value = Int(last), value >= start else {
                self = .whole
                return
            }
            end = value
        }
        guard start < length else {
            self = .unsatisfiable
            return
        }
        self = .partial(start...min(end, length - 1))
    }
}

