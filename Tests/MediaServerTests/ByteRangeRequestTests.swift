import MediaServer
import Testing

@Suite struct ByteRangeRequestTests {
    @Test(arguments: [
        ("bytes=0-99", ByteRangeRequest.partial(0...99)),
        ("bytes=100-", .partial(100...999)),
        ("bytes=-100", .partial(900...999)),
        ("bytes=900-5000", .partial(900...999)),
        ("bytes=-5000", .partial(0...999)),
        ("Bytes = 0-0", .partial(0...0)),
        ("bytes=1000-", .unsatisfiable),
        ("bytes=-0", .unsatisfiable),
        ("bytes=1000-1001, 2000-", .unsatisfiable),
        ("bytes=5-2", .whole),
        ("bytes=a-b", .whole),
        ("bytes=-", .whole),
        ("bytes=1", .whole),
        ("bytes=+1-2", .whole),
        ("items=0-1", .whole),
        ("bytes=0-1,5-6", .multiple([0...1, 5...6])),
        ("bytes=500-509, 0-9", .multiple([500...509, 0...9])),
        ("bytes=0-9, 2000-3000, -10", .multiple([0...9, 990...999])),
        ("bytes=0-9, 5000-", .partial(0...9)),
        ("bytes=0-1,x", .whole),
        ("bytes=0-1,,2-3", .whole),
    ])
    func resolvesAgainstALengthOf1000(header: String, expected: ByteRangeRequest) {
        #expect(ByteRangeRequest(header: header, length: 1000) == expected)
    }

    @Test func overlappingOrAdjacentRangesAreMergedInOrder() {
        #expect(
            ByteRangeRequest(header: "bytes=500-600,0-10,550-700,11-20", length: 1000)
                == .multiple([0...20, 500...700]))
        #expect(ByteRangeRequest(header: "bytes=0-10,0-10,0-10", length: 1000) == .partial(0...10))
    }

    @Test func tooManyRangesAreIgnored() {
        let many = (0..<201).map { "\($0 * 2)-\($0 * 2)" }.joined(separator: ",")
        #expect(ByteRangeRequest(header: "bytes=" + many, length: 1000) == .whole)
        let allowed = (0..<200).map { "\($0 * 2)-\($0 * 2)" }.joined(separator: ",")
        guard case .multiple(let ranges) = ByteRangeRequest(header: "bytes=" + allowed, length: 1000) else {
            Issue.record("200 ranges are served")
            return
        }
        #expect(ranges.count == 200)
    }

    @Test func noHeaderMeansTheWholeBody() {
        #expect(ByteRangeRequest(header: nil, length: 10) == .whole)
    }
}
