import Foundation
import TestSupport
import Testing

/// The inputs that used to take the whole `harness serve` process down (seven traps on numbers nobody
/// bounded, one glob that took exponential time, and a date ICU could not parse), each sent by curl to
/// a running `serve` as a user would: each must get a clear error naming the field, and every service
/// must keep answering.
@Suite struct HostileInputTests {
    enum Input: String, CaseIterable, CustomTestStringConvertible {
        case apnsRateLimit, apnsFailureDelay, mediaFirstByteDelay, mediaLyingLength, mediaLongPath, mediaStarryGlob,
            parseExpirationInterval, parseBadgeIncrement, parseExpirationTimeICU
        var testDescription: String { rawValue }
    }

    @Test(arguments: Input.allCases)
    func aHostileInputGetsAClearErrorAndEveryServiceKeepsAnswering(_ input: Input) async throws {
        let serve = try await ServedHarness("hostile-\(input.rawValue)")
        let apnsControl = serve.url("apns", "controlURL")
        let mediaControl = serve.url("media", "controlURL")
        let token = try await registerDevice(serve)
        switch input {
        case .apnsRateLimit:
            let answer = try await CurlExchange.json(
                "POST", apnsControl + "/rate-limits", #"{"deviceToken": "\#(token)", "requestsPerSecond": 1e19}"#)
            #expect(answer.status == 400, "\(answer)")
            #expect(answer.body.contains("requestsPerSecond must be between"), "\(answer)")
        case .apnsFailureDelay:
            let answer = try await CurlExchange.json(
                "POST", apnsControl + "/failures",
                #"{"deviceToken": "\#(token)", "status": 200, "delayMilliseconds": 10000000000000}"#)
            #expect(answer.status == 400, "\(answer)")
            #expect(answer.body.contains("delayMilliseconds must be between 0 and 86400000"), "\(answer)")
        case .mediaFirstByteDelay:
            let answer = try await CurlExchange.json(
                "PUT", mediaControl + "/settings", #"{"firstByteDelayMilliseconds": 9223372036854775807}"#)
            #expect(answer.status == 400, "\(answer)")
            #expect(answer.body.contains("firstByteDelayMilliseconds must be between 0 and 86400000"), "\(answer)")
        case .mediaLyingLength:
            let answer = try await CurlExchange.json(
                "POST", mediaControl + "/faults", #"{"fault": "lyingContentLength", "by": 9223372036854775807}"#)
            #expect(answer.status == 400, "\(answer)")
            #expect(answer.body.contains("lyingContentLength needs by"), "\(answer)")
        case .mediaLongPath:
            let path = "/" + String(repeating: "a", count: 20_000)
            let answer = try await CurlExchange.json(
                "POST", mediaControl + "/faults", #"{"fault": "reset", "afterBytes": 0, "path": "\#(path)"}"#)
            #expect(answer.status == 400, "\(answer)")
            #expect(answer.body.contains("path must be at most 1024 bytes long, not 20001"), "\(answer)")
            let get = try await CurlExchange.run([serve.url("media") + path])
            #expect(get.status == 414, "longer than Apache's LimitRequestLine: \(get)")
        case .mediaStarryGlob:
            let pattern = String(repeating: "*a", count: 11) + "b"
            let added = try await CurlExchange.json(
                "POST", mediaControl + "/faults", #"{"fault": "status", "status": 503, "path": "\#(pattern)"}"#)
            #expect(added.status == 201, "\(added)")
            // The old recursive matcher tried every way to split the 40 a's among 11 stars.
            let get = try await CurlExchange.run([serve.url("media") + "/" + String(repeating: "a", count: 40)])
            #expect(get.status == 404, "\(get)")
        case .parseExpirationInterval:
            let answer = try await CurlExchange.json(
                "POST", serve.url("parse") + "/push", #"{"where": {}, "data": {}, "expiration_interval": 1e300}"#,
                headers: parseHeaders(serve, master: true))
            #expect(answer.status == 400, "\(answer)")
            #expect(answer.body.contains("expiration_interval must be at most 315360000 seconds"), "\(answer)")
        case .parseExpirationTimeICU:
            // Found by the parse-push fuzzer: Foundation's ISO8601DateFormatter died with SIGFPE on it.
            let date = "2030-01-01T0:00:00." + String(repeating: "2", count: 60) + "Z"
            let answer = try await CurlExchange.json(
                "POST", serve.url("parse") + "/push", #"{"where": {}, "data": {}, "expiration_time": "\#(date)"}"#,
                headers: parseHeaders(serve, master: true))
            #expect(answer.status == 400, "\(answer)")
            #expect(answer.body.contains("\(date) is not valid time."), "\(answer)")
        case .parseBadgeIncrement:
            let saved = try await CurlExchange.json(
                "POST", serve.url("parse") + "/installations",
                #"{"deviceType": "ios", "deviceToken": "\#(token)", "appIdentifier": "\#(serve.url("apns", "topic"))", "badge": 9223372036854775807}"#,
                headers: parseHeaders(serve, master: false))
            // Parse Server takes any number as a badge; an Increment push reads it in the range iOS shows.
            #expect(saved.status == 201, "\(saved)")
            let push = try await CurlExchange.json(
                "POST", serve.url("parse") + "/push",
                #"{"where": {"deviceType": "ios"}, "data": {"alert": "hi", "badge": "Increment"}}"#,
                headers: parseHeaders(serve, master: true))
            // The old sender trapped on the overflow while preparing the push, before this answer.
            #expect(push.status == 200, "\(push)")
        }
        try await expectEveryServiceAnswers(serve)
        #expect(await serve.stop() == 0, "\(serve.process.output)")
    }

    /// Many small header fields, or one huge one: refused on every HTTP/1.1 surface (400 or 431) and on the
    /// provider API (the HTTP/2 header list is limited to 16 KB), and everything keeps answering.
    static let headerFlood = """
        import json, socket, ssl, sys, urllib.parse
        import h2.config, h2.connection, h2.events
        endpoints = json.load(open(sys.argv[1]))
        def http1(url, path, count, size):
            u = urllib.parse.urlparse(url)
            s = socket.create_connection((u.hostname, u.port))
            s.settimeout(30)
            fields = "".join(f"X-{i}: {'v' * size}\\r\\n" for i in range(count))
            try:
                s.sendall(f"GET {u.path}{path} HTTP/1.1\\r\\nHost: x\\r\\n{fields}\\r\\n".encode())
                return s.recv(12).decode(errors="replace")
            except OSError as error:
                # The server answered 400 and closed while the rest was still being sent.
                return f"refused ({error.__class__.__name__})"
        def http2(count, size):
            u = urllib.parse.urlparse(endpoints["apns"]["url"])
            context = ssl.create_default_context(cafile=endpoints["apns"]["caFile"])
            context.set_alpn_protocols(["h2"])
            s = context.wrap_socket(socket.create_connection((u.hostname, u.port)), server_hostname="localhost")
            s.settimeout(30)
            c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, validate_outbound_headers=False))
            c.initiate_connection()
            s.sendall(c.data_to_send())
            headers = [(":method", "POST"), (":scheme", "https"), (":authority", "localhost"), (":path", "/3/device/00")]
            c.send_headers(1, headers + [(f"x-{i}", "v" * size) for i in range(count)], end_stream=True)
            try:
                # The server may refuse and close before the whole block is sent: that is a refusal too.
                s.sendall(c.data_to_send())
                while True:
                    data = s.recv(65535)
                    if not data:
                        return "refused (closed)"
                    for event in c.receive_data(data):
                        if isinstance(event, (h2.events.ConnectionTerminated, h2.events.StreamReset)):
                            return "refused"
                        if isinstance(event, h2.events.ResponseReceived):
                            return "answered " + dict(event.headers).get(b":status", b"?").decode()
            except OSError as error:
                return f"refused ({error.__class__.__name__})"
        surfaces = [("media", "url", "/photos/dailyphoto.jpg"), ("media", "controlURL", "/settings"),
                    ("parse", "url", "/health"), ("apns", "controlURL", "/health")]
        for service, key, path in surfaces:
            # With Host, 100 fields (the limit) and 101 (one over), then floods of many and of large ones.
            for count, size in [(99, 1), (100, 1), (20000, 1), (1, 100000)]:
                print(service, key, count, size, http1(endpoints[service][key], path, count, size))
        for count, size in [(20000, 1), (1, 100000)]:
            print("apns", "url", count, size, http2(count, size))
        """

    /// Each HTTP/1.1 surface serves a request of 100 header fields and refuses one of 101 (the media
    /// server with Apache's 400, the others with 431) and floods of many or large fields; the provider API
    /// refuses a header list over 16 KB.
    @Test func floodsOfHeaderFieldsAreRefusedEverywhere() async throws {
        let serve = try await ServedHarness()
        let file = try PackagePaths.temporaryDirectory().appendingPathComponent("endpoints.json")
        try JSONSerialization.data(withJSONObject: serve.endpoints).write(to: file)
        let flood = try await ChildProcess.run(PackagePaths.python, ["-c", Self.headerFlood, file.path])
        let lines = flood.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.count == 18, "\(flood.transcript)")
        for line in lines {
            // service, key, field count, field size, answer
            let fields = line.split(separator: " ", maxSplits: 4).map(String.init)
            guard fields.count == 5 else {
                Issue.record("unreadable: \(line)")
                continue
            }
            let answer = fields[4]
            if fields[2] == "99" {
                #expect(answer == "HTTP/1.1 200", "\(line)")
            } else if fields[2] == "100" {
                #expect(answer == (fields[0...1] == ["media", "url"] ? "HTTP/1.1 400" : "HTTP/1.1 431"), "\(line)")
            } else {
                // Refused: a 400 or 431 (HTTP/1.1), a GOAWAY or reset (HTTP/2), or a close while the flood
                // was still being sent; that the server lives on is checked below.
                #expect(answer.hasPrefix("HTTP/1.1 4") || answer.contains("refused"), "\(line)")
            }
        }
        try await expectEveryServiceAnswers(serve)
        #expect(await serve.stop() == 0, "\(serve.process.output)")
    }

    /// Issue 31's patterns, each of which backtracked for 30 s to minutes over twenty installations
    /// whose `x` is forty `a` then `!`, while every other service stopped answering.
    @Test(arguments: ["(a*)*b", "^(a+)+$", "^(a|aa)+$"])
    func aBacktrackingRegexIsRefusedWithinItsBudgetWhileEveryServiceAnswers(_ pattern: String) async throws {
        let serve = try await ServedHarness("hostile-regex")
        let field = String(repeating: "a", count: 40) + "!"
        for index in 0..<20 {
            let token = String(format: "%064x", index + 1)
            let saved = try await CurlExchange.json(
                "POST", serve.url("parse") + "/installations",
                #"{"deviceType": "ios", "deviceToken": "\#(token)", "x": "\#(field)"}"#,
                headers: parseHeaders(serve, master: true))
            #expect(saved.status == 201, "\(saved)")
        }
        let clause = #"{"x":{"$regex":"\#(pattern)"}}"#
        let query = clause.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? clause
        async let answer = CurlExchange.run(
            [serve.url("parse") + "/installations?where=" + query]
                + parseHeaders(serve, master: true).flatMap {
                    ["-H", $0]
                })
        // Meanwhile, and after: every service answers.
        try await expectEveryServiceAnswers(serve)
        let refused = try await answer
        #expect(refused.status == 400, "\(refused)")
        #expect(refused.body.contains(#""code":102"#), "\(refused)")
        #expect(refused.body.contains("took the query past 1000000 steps, the budget for one query"), "\(refused)")
        // An ordinary pattern over the same installations still finds them all.
        let plain = #"{"x":{"$regex":"^a+!$"}}"#.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let found = try await CurlExchange.run(
            [serve.url("parse") + "/installations?where=" + plain + "&count=1&limit=0"]
                + parseHeaders(serve, master: true).flatMap { ["-H", $0] })
        #expect(found.status == 200 && found.body.contains(#""count":20"#), "\(found)")
        try await expectEveryServiceAnswers(serve)
        #expect(await serve.stop() == 0, "\(serve.process.output)")
    }

    /// Issue 31's 1 KB harness.yml, nine anchors each nine aliases of the one before under a push's
    /// `data:` (it grew `harness list` past 550 MB), and the same with an alias as a key: exit 2 at
    /// once, naming the file, line and key path.
    @Test func aliasesThatMultiplyAreRefusedNamingTheLine() async throws {
        let laughs = PackagePaths.root.appendingPathComponent("Tests/Fuzz/harness-yml/billion-laughs.yml")
        let listed = try await HarnessCommand.run(["list", "-c", laughs.path])
        #expect(listed.status == 2, "\(listed.transcript)")
        #expect(
            listed.standardError.contains(
                "billion-laughs.yml:17:68: 'scenarios.laughs.steps[0].push.data.f.f7': aliases expand this document past 1,000,000 nodes"
            ), "\(listed.transcript)")
        let keyed = try PackagePaths.temporaryDirectory().appendingPathComponent("keyed.yml")
        try (String(contentsOf: laughs, encoding: .utf8) + "            ? *i\n            : x\n").write(
            to: keyed, atomically: true, encoding: .utf8)
        let refused = try await HarnessCommand.run(["list", "-c", keyed.path])
        #expect(refused.status == 2, "\(refused.transcript)")
        #expect(refused.standardError.contains("keyed.yml:21:15"), "\(refused.transcript)")
        #expect(refused.standardError.contains("an alias may not be a mapping key"), "\(refused.transcript)")
    }

    /// The endpoints file holds Parse's master key: readable by its owner only, as the keys are.
    @Test func theEndpointsFileIsReadableByItsOwnerOnly() async throws {
        let serve = try await ServedHarness("hostile-endpoints")
        let file = serve.endpointsFile
        let permissions = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions]
        #expect((permissions as? NSNumber)?.intValue == 0o600)
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(!serve.url("parse", "masterKey").isEmpty && text.contains(serve.url("parse", "masterKey")), "\(text)")
        #expect(await serve.stop() == 0, "\(serve.process.output)")
    }

    func registerDevice(_ serve: ServedHarness) async throws -> String {
        let answer = try await CurlExchange.json(
            "POST", serve.url("apns", "controlURL") + "/devices", #"{"topic": "\#(serve.url("apns", "topic"))"}"#)
        let object = try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any]
        return try #require(object?["deviceToken"] as? String, "\(answer)")
    }

    func parseHeaders(_ serve: ServedHarness, master: Bool) -> [String] {
        var headers = ["X-Parse-Application-Id: \(serve.url("parse", "applicationId"))"]
        if master { headers.append("X-Parse-Master-Key: \(serve.url("parse", "masterKey"))") }
        if let key = serve.endpoints["parse"]?["clientKey"] { headers.append("X-Parse-Client-Key: \(key)") }
        return headers
    }

    /// Every listening surface of `serve` answers as it should: the provider API (403 without a token),
    /// APNs's control API, the media server and its control API, and Parse.
    func expectEveryServiceAnswers(_ serve: ServedHarness) async throws {
        #expect(serve.isAlive, "harness serve ended:\n\(serve.process.output)")
        let provider = try await CurlExchange.run(
            [
                "--http2", "--cacert", serve.url("apns", "caFile"), "-X", "POST", "--data", "{}",
                serve.url("apns") + "/3/device/00",
            ])
        #expect(provider.status == 403, "the provider API: \(provider)")
        let apnsControl = try await CurlExchange.run([serve.url("apns", "controlURL") + "/health"])
        #expect(apnsControl.status == 200, "APNs's control API: \(apnsControl)")
        let media = try await CurlExchange.run(["--head", serve.url("media") + "/photos/dailyphoto.jpg"])
        #expect(media.status == 200, "the media server: \(media)")
        let mediaControl = try await CurlExchange.run([serve.url("media", "controlURL") + "/settings"])
        #expect(mediaControl.status == 200, "the media control API: \(mediaControl)")
        let parse = try await CurlExchange.run([serve.url("parse") + "/health"])
        #expect(parse.status == 200 && parse.body.contains("ok"), "Parse: \(parse)")
    }
}
