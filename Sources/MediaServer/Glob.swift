/// `*` and `?` globbing over bytes, in time proportional to pattern × text at worst and without
/// recursion: on a mismatch only the last `*` needs to take one more byte (the classic greedy matcher),
/// since anything an earlier star could absorb the last one can too.
enum Glob {
    static func matches(_ pattern: ArraySlice<UInt8>, _ text: ArraySlice<UInt8>) -> Bool {
        var steps = 0
        return matches(pattern, text, steps: &steps)
    }

    /// The same, counting the loop's steps in `steps` (the tests hold it to pattern × text).
    static func matches(_ pattern: ArraySlice<UInt8>, _ text: ArraySlice<UInt8>, steps: inout Int) -> Bool {
        let star = UInt8(ascii: "*")
        let any = UInt8(ascii: "?")
        var p = pattern.startIndex
        var t = text.startIndex
        // Where the last star was seen, and the text position it has absorbed up to.
        var lastStar: (pattern: Int, text: Int)?
        while t < text.endIndex {
            steps += 1
            if p < pattern.endIndex, pattern[p] == star {
                lastStar = (p, t)
                p += 1
            } else if p < pattern.endIndex, pattern[p] == any || pattern[p] == text[t] {
                p += 1
                t += 1
            } else if let star = lastStar {
                lastStar = (star.pattern, star.text + 1)
                p = star.pattern + 1
                t = star.text + 1
            } else {
                return false
            }
        }
        while p < pattern.endIndex, pattern[p] == star { p += 1 }
        return p == pattern.endIndex
    }
}
