import DeviceProtocol
import ParseModel
import Testing

/// The hand-written JSON every stored row and answer is written with: what Foundation's encoder
/// writes, read back to the same value.
@Suite struct ParseJSONTests {
    @Test(arguments: [
        JSONValue.null, true, false, 0, -7, .number(1.5), .number(-0.25), .number(1e300), .number(123_456_789_012_345),
        .number(1e15), .number(9_007_199_254_740_992), .number(1e16), .number(-1e15), .number(-0.0), .number(1e-7),
        "", "plain", "quote \" backslash \\ slash / newline \n tab \t return \r", "\u{08}\u{0C}\u{01}\u{1F}",
        "é ☃ 🚀", [], [1, "a", [true, .null]], [:], ["b": 1, "a": ["z": [], "y": "x"]],
    ])
    func writesWhatFoundationWritesAndReadsBack(_ value: JSONValue) throws {
        let text = ParseJSON.text(value)
        #expect(text == value.jsonString())
        #expect(try ParseJSON.decode(Array(text.utf8)) == value)
    }
}
