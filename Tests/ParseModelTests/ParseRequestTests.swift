import DeviceProtocol
import ParseModel
import Testing

/// How a call is read before it is answered: routes, the `_method` override, keys in headers or in the
/// body as the JS SDK sends them, and who the caller is (parse.md §1.1–1.3).
@Suite struct ParseRequestTests {
    let keyring = ParseKeyring(applicationId: "app", masterKey: "master", clientKeys: [])

    func request(
        _ method: String, _ path: String, headers: [String: String] = ["x-parse-application-id": "app"],
        query: [String: String] = [:], body: JSONValue? = nil
    ) throws(ParseFailure) -> ParseRequest {
        try ParseRequest(
            method: method, path: path.split(separator: "/").map(String.init), headers: headers, query: query,
            body: body)
    }

    @Test(arguments: [
        ("GET", "health", ParseRoute.health), ("GET", "serverInfo", .serverInfo), ("POST", "push", .push),
        ("POST", "batch", .batch),
        ("GET", "installations", .find(.installation)), ("GET", "classes/_Installation", .find(.installation)),
        ("POST", "installations", .create(.installation)), ("POST", "classes/_Installation", .create(.installation)),
        ("GET", "installations/abc", .get(.installation, "abc")),
        ("PUT", "installations/abc", .update(.installation, "abc")),
        ("DELETE", "classes/_Installation/abc", .delete(.installation, "abc")),
        ("GET", "classes/_PushStatus", .find(.pushStatus)), ("GET", "classes/_PushStatus/p1", .get(.pushStatus, "p1")),
    ])
    func routes(_ method: String, _ path: String, _ route: ParseRoute) throws {
        #expect(try request(method, path).route == route)
    }

    @Test(arguments: [
        ("GET", "classes/GameScore"), ("PUT", "installations"), ("POST", "installations/abc"), ("GET", "users"),
    ])
    func unservedPathsAreA404ThatSaysSo(_ method: String, _ path: String) {
        do {
            _ = try request(method, path)
            Issue.record("\(method) \(path) was routed")
        } catch {
            #expect(error.status == 404)
            #expect(error.message == "FakeParse does not serve \(method) /\(path) (docs/parse.md lists its routes)")
        }
    }

    @Test func aPostWithMethodAndKeysInItsBodyIsReadAsTheJSSDKMeantIt() throws {
        let body: JSONValue = [
            "_method": "GET", "_ApplicationId": "app", "_MasterKey": "master", "_ClientVersion": "js5.0.0",
            "_InstallationId": "i-1", "where": ["deviceType": "ios"], "count": 1, "limit": 0,
        ]
        let read = try request("POST", "classes/_Installation", headers: [:], body: body)
        #expect(read.method == .get)
        #expect(read.route == .find(.installation))
        #expect(read.credentials == ParseCredentials(applicationId: "app", masterKey: "master", installationId: "i-1"))
        #expect(read.fields == ["where": ["deviceType": "ios"], "count": 1, "limit": 0])
        #expect(try keyring.access(read.credentials) == .master)
    }

    @Test func anApplicationIdHeaderWinsOverTheBodysKeys() throws {
        let read = try request("POST", "installations", body: ["_ApplicationId": "other", "deviceType": "ios"])
        #expect(read.credentials.applicationId == "app")
        #expect(read.fields == ["deviceType": "ios"])
    }

    @Test func aGetsParametersAreJSONWhereTheyParse() throws {
        let read = try request(
            "GET", "installations", query: ["where": #"{"badge":1}"#, "count": "1", "order": "-createdAt"])
        #expect(read.fields == ["where": ["badge": 1], "count": 1, "order": "-createdAt"])
    }

    @Test func queryStringsAreFormDecoded() {
        #expect(
            ParseRequest.formDecoded("where=%7B%22a%22%3A+%22b+c%22%7D&count=1&keys=&x=%ZZ")
                == ["where": #"{"a": "b c"}"#, "count": "1", "keys": "", "x": "%ZZ"])
    }

    @Test func aBodyThatIsNotAnObjectIsRefused() {
        #expect(throws: ParseFailure(code: 107, "the body must be a JSON object, not Array")) {
            try request("POST", "installations", body: [1, 2])
        }
    }

    @Test func malformedJSONIsRefusedAsParseServersBodyParserDoes() {
        #expect(throws: ParseFailure.self) { try ParseJSON.decode(Array("{bad".utf8)) }
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        do {
            _ = try ParseJSON.decode(Array(deep.utf8))
            Issue.record("10,000 nested arrays were read")
        } catch {
            #expect(error.status == 400)
            #expect(error.code == nil)
        }
    }

    @Test func keys() throws {
        let credentials = { (app: String?, master: String?, client: [String]) in
            ParseCredentials(applicationId: app, masterKey: master, clientKeys: client)
        }
        #expect(throws: ParseFailure(status: 403, "unauthorized")) { try keyring.access(credentials(nil, nil, [])) }
        #expect(throws: ParseFailure(status: 403, "unauthorized")) {
            try keyring.access(credentials("x", "master", []))
        }
        #expect(try keyring.access(credentials("app", nil, [])) == .client)
        #expect(try keyring.access(credentials("app", "wrong", ["any"])) == .client)
        let locked = ParseKeyring(applicationId: "app", masterKey: "master", clientKeys: ["rest"])
        #expect(throws: ParseFailure(status: 403, "unauthorized")) { try locked.access(credentials("app", nil, ["x"])) }
        #expect(try locked.access(credentials("app", nil, ["rest"])) == .client)
        #expect(try locked.access(credentials("app", "master", [])) == .master)
    }
}
