/// A `Range: bytes=…` header resolved against a resource's length (RFC 9110 §14).
public enum ByteRangeRequest: Equatable, Sendable {
    /// No usable range: serve the whole body with `200`.
    case whole
    /// One range: `206` with `Content-Range`.
    case partial(ClosedRange<Int>)
    /// Several ranges: `206` with a `multipart/byteranges` body, in the order asked for.
    case multiple([ClosedRange<Int>])
    /// Nothing satisfiable: `416` with `Content-Range: bytes */<length>`.
    case unsatisfiable

    /// More ranges than this and the header is ignored, as Apache's `MaxRanges` default does.
    public static let maximumRanges = 200

    /// Parses one `Range` header value. A header that does not parse (another unit, a range whose
    /// last byte comes before its first, anything but digits) is ignored: the whole body, as RFC 9110
    /// lets a server do. Ranges past the end are dropped; when none is left the answer is `416`.
    /// Overlapping or adjacent ranges are merged, as Apache does since CVE-2011-3192, so that a
    /// request cannot ask for the same bytes many times over.
    public init(header: String?, length: Int) {
        guard let header, let equals = header.firstIndex(of: "="),
            header[..<equals].trimmingCharacters(in: .whitespaces).lowercased() == "bytes"
        else {
            self = .whole
            return
        }
        let specs = header[header.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        guard specs.count <= Self.maximumRanges else {
            self = .whole
            return
        }
        var satisfiable: [ClosedRange<Int>] = []
        for spec in specs {
            guard let range = Self.range(spec, length: length) else {
                self = .whole
                return
            }
            if let range { satisfiable.append(range) }
        }
        guard !satisfiable.isEmpty else {
            self = .unsatisfiable
            return
        }
        let merged = Self.mergedIfOverlapping(satisfiable)
        self = merged.count == 1 ? .partial(merged[0]) : .multiple(merged)
    }

    /// nil when the spec does not parse; `.some(nil)` when it parses but selects nothing.
    private static func range(_ spec: String, length: Int) -> ClosedRange<Int>?? {
        guard let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash]
        let last = spec[spec.index(after: dash)...]
        guard first.allSatisfy(\.isASCIIDigit), last.allSatisfy(\.isASCIIDigit), !(first.isEmpty && last.isEmpty) else {
            return nil
        }
        if first.isEmpty {
            // A suffix: the last N bytes.
            guard let suffix = Int(last) else { return nil }
            guard suffix > 0, length > 0 else { return .some(nil) }
            return max(0, length - suffix)...(length - 1)
        }
        guard let start = Int(first) else { return nil }
        let end = last.isEmpty ? Int.max : Int(last) ?? Int.max
        guard end >= start else { return nil }
        guard start < length else { return .some(nil) }
        return start...min(end, length - 1)
    }

    /// The ranges as asked when none overlaps or touches another; otherwise sorted and merged.
    private static func mergedIfOverlapping(_ ranges: [ClosedRange<Int>]) -> [ClosedRange<Int>] {
        let sorted = ranges.sorted { $0.lowerBound < $1.lowerBound }
        var merged: [ClosedRange<Int>] = []
        for range in sorted {
            if let last = merged.last, range.lowerBound <= last.upperBound + 1 {
                merged[merged.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged.count == ranges.count ? ranges : merged
    }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
