import ParseModel
import Testing

/// Parse's ISO dates, read without ICU.
@Suite struct ISODateTests {
    @Test(arguments: [
        ("1970-01-01T00:00:00Z", 0), ("2015-03-19T22:05:08Z", 1_426_802_708),
        ("2015-03-19T22:05:08.123Z", 1_426_802_708),
        ("2030-01-01T00:00:00.000000001Z", 1_893_456_000), ("2015-03-19T23:05:08+01:00", 1_426_802_708),
        ("2000-02-29T12:00:00Z", 951_825_600), ("9999-12-31T23:59:59Z", 253_402_300_799),
    ])
    func validDates(_ text: String, _ seconds: Int) {
        #expect(ISODate.epochSeconds(text) == seconds)
    }

    @Test(arguments: [
        "", "2015-03-19", "2015-03-19T22:05:08", "2015-13-19T22:05:08Z", "2015-02-29T22:05:08Z", "2015-03-19T24:05:08Z",
        "2015-03-19T22:05:08.Z", "2015-03-19T22:05:08+1:00", "2015-03-19 22:05:08Z", "2015-03-19T22:05:08Zjunk",
        // Foundation's ICU-based ISO8601DateFormatter dies with SIGFPE on this one (found by the fuzzer).
        "2030-01-01T0:00:00.00022222222222222222222222222222222222222222222222222222222222222222Z",
        "2030-01-01T00:00:00.0002222222222222222222222Z", "１９７０-01-01T00:00:00Z",
    ])
    func invalidDates(_ text: String) {
        #expect(ISODate.epochSeconds(text) == nil)
    }
}
