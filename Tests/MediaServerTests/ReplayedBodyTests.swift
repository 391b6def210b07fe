import NIOHTTP1
import Testing

@testable import MediaServer

/// Which replayed answers carry a body, whatever the recording holds (RFC 9110 §6.4.1): a row each.
@Suite struct ReplayedBodyTests {
    @Test(arguments: [
        (200, HTTPMethod.GET, true), (206, .GET, true), (404, .GET, true), (500, .POST, true),
        (200, .HEAD, false), (304, .GET, false), (204, .GET, false), (204, .DELETE, false), (100, .GET, false),
        (0, .GET, false),
    ])
    func aBodyGoesOutOnlyWhereHTTPHasOne(_ status: Int, _ method: HTTPMethod, _ carries: Bool) {
        #expect(ReplayedBody.carries(status: status, method: method) == carries)
    }
}
