/// Parse Server's `allowCrossDomain` middleware as configured by default (`allowOrigin` and
/// `allowHeaders` unset): the CORS headers on every answer below `/parse`, and a preflight (`OPTIONS`)
/// answered `200 OK` before any key is checked. So a web page on any origin can call FakeParse as it
/// calls Parse Server, and read `X-Parse-Push-Status-Id`.
public enum ParseCrossOrigin {
    /// The request headers a page may send: Parse Server's `DEFAULT_ALLOWED_HEADERS`.
    public static let allowedHeaders = [
        "X-Parse-Master-Key", "X-Parse-REST-API-Key", "X-Parse-Javascript-Key", "X-Parse-Application-Id",
        "X-Parse-Client-Version", "X-Parse-Session-Token", "X-Requested-With", "X-Parse-Revocable-Session",
        "X-Parse-Request-Id", "Content-Type", "Pragma", "Cache-Control",
    ]

    /// The headers of every answer, in Parse Server's order.
    public static let headers: [(name: String, value: String)] = [
        ("Access-Control-Allow-Origin", "*"),
        ("Access-Control-Allow-Methods", "GET,PUT,POST,DELETE,OPTIONS"),
        ("Access-Control-Allow-Headers", allowedHeaders.joined(separator: ", ")),
        ("Access-Control-Expose-Headers", "X-Parse-Job-Status-Id, X-Parse-Push-Status-Id"),
    ]
}
