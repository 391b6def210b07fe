/// The names most like one that was not found, for a "did you mean" that helps: by edit distance
/// (Damerau–Levenshtein, a swap of neighbours one edit), the closest first, only those within a quarter of
/// the longer name's length (and at least 2 edits), or that contain it or are contained in it.
public enum NearestNames {
    /// At most `limit` of `names`, closest first, ties in the order given.
    public static func closest(to wanted: String, among names: [String], limit: Int = 3) -> [String] {
        let target = Array(wanted.lowercased().prefix(200))
        let scored = names.enumerated().compactMap { index, name -> (distance: Int, index: Int, name: String)? in
            let candidate = Array(name.lowercased().prefix(200))
            let distance = editDistance(target, candidate)
            let allowed = max(2, max(target.count, candidate.count) / 4)
            let overlaps =
                !target.isEmpty
                && (String(candidate).contains(String(target)) || String(target).contains(String(candidate)))
            guard distance <= allowed || overlaps else { return nil }
            return (distance, index, name)
        }
        return scored.sorted { ($0.distance, $0.index) < ($1.distance, $1.index) }.prefix(limit).map(\.name)
    }

    /// Edits (insert, delete, replace, swap two neighbours) that turn `a` into `b`.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var before = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], before[j - 2] + 1)
                }
            }
            (before, previous, current) = (previous, current, before)
        }
        return previous[b.count]
    }

    /// "did you mean 'a' or 'b'?", or nil when nothing is near.
    public static func suggestion(for wanted: String, among names: [String]) -> String? {
        let near = closest(to: wanted, among: names)
        guard !near.isEmpty else { return nil }
        let quoted = near.map { "'\($0)'" }
        let listed = quoted.count == 1 ? quoted[0] : quoted.dropLast().joined(separator: ", ") + " or " + quoted.last!
        return "did you mean \(listed)?"
    }
}
