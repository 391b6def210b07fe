import MediaServer
import Testing

@Suite struct ByteRangeRequestTests {
    @Test(arguments: [
        ("bytes=0-99", ByteRangeRequest.partial(0...99)),
        ("bytes=100-", .partial(100...999)),
        ("bytes=-100", .partial(900...999)),
        ("bytes=900-5000", .partial(900...999)),
        ("bytes=-5000", .partial(0...999)),
        ("bytes=1000-", .unsatisfiable),
        ("bytes=5-2", .whole),
        ("bytes=a-b", .whole),
        ("items=0-1", .whole),
        ("bytes=0-1,5-6", .whole),
    ])
    func resolvesAgainstALengthOf1000(header: String, expected: ByteRangeRequest) {
        #expect(ByteRangeRequest(header: header, length: 1000) == expected)
    }

    @Test func noHeaderMeansTheWholeBody() {
        #expect(ByteRangeRequest(header: nil, length: 10) == .whole)
    }
}
