import Foundation
import HarnessTimeline
import TestSupport
import Testing

@testable import MediaServer

@Suite struct MediaFaultPlanTests {
    @Test func rulesApplyInOrderToMatchingPathsForTheirCount() {
        var plan = MediaFaultPlan()
        _ = plan.add(MediaFault(.status, path: "/videos/*", count: 2))
        _ = plan.add(MediaFault(.fin, path: "*.jpg"))
        #expect(plan.next(for: "/videos/discovery.mp4").ending?.fault == .status)
        #expect(plan.next(for: "/photos/dailyphoto.jpg").ending?.fault == .fin)
        #expect(plan.next(for: "/videos/a/b.mp4").ending?.fault == .status)
        #expect(plan.next(for: "/videos/discovery.mp4").isEmpty, "count 2 is spent")
        #expect(plan.next(for: "/downloads/42.mp3").isEmpty)
        #expect(plan.status.map(\.fired) == [2, 1])
    }

    @Test func headerFaultsComposeWithTheFirstEndingFault() {
        var plan = MediaFaultPlan()
        _ = plan.add(MediaFault(.noAcceptRanges))
        var cut = MediaFault(.reset, count: 1)
        cut.afterFraction = 0.5
        _ = plan.add(cut)
        _ = plan.add(MediaFault(.closeBeforeHeaders, count: 1))
        _ = plan.add(MediaFault(.changeETag, count: 1))
        let first = plan.next(for: "/photos/dailyphoto.jpg")
        #expect(first.ending == cut)
        #expect(first.headerChanges == [.noAcceptRanges, .changeETag])
        let second = plan.next(for: "/photos/dailyphoto.jpg")
        #expect(second.ending?.fault == .closeBeforeHeaders, "the second ending rule stayed due")
        #expect(second.headerChanges == [.noAcceptRanges])
        #expect(plan.next(for: "/photos/dailyphoto.jpg") == AppliedFaults(headerChanges: [.noAcceptRanges]))
        #expect(plan.status.map(\.fired) == [3, 1, 1, 1])
    }

    @Test func aSeededProbabilityRepeatsExactly() {
        func pattern() -> [Bool] {
            var plan = MediaFaultPlan()
            var fault = MediaFault(.reset)
            fault.probability = 0.3
            fault.seed = 42
            fault.afterBytes = 10
            _ = plan.add(fault)
            return (0..<200).map { _ in !plan.next(for: "/x").isEmpty }
        }
        let first = pattern()
        #expect(first == pattern())
        #expect((40...80).contains(first.filter { $0 }.count), "about 30 % of 200")
    }

    @Test func globs() {
        #expect(Glob.matches(Array("/videos/*".utf8)[...], Array("/videos/a/b.mp4".utf8)[...]))
        #expect(Glob.matches(Array("*.mp?".utf8)[...], Array("/downloads/42.mp3".utf8)[...]))
        #expect(!Glob.matches(Array("/photos/*".utf8)[...], Array("/videos/x".utf8)[...]))
        #expect(Glob.matches(Array("*".utf8)[...], Array("".utf8)[...]))
        #expect(!Glob.matches(Array("?".utf8)[...], Array("".utf8)[...]))
        #expect(Glob.matches(Array("a*b*c".utf8)[...], Array("abbbc".utf8)[...]))
        #expect(!Glob.matches(Array("a*b*c".utf8)[...], Array("abbbcd".utf8)[...]))
        // The pattern that took the recursive matcher exponential time: the answer comes at once.
        let stars = Array((String(repeating: "*a", count: 11) + "b").utf8)[...]
        #expect(!Glob.matches(stars, Array(("/" + String(repeating: "a", count: 40)).utf8)[...]))
        #expect(Glob.matches(stars, Array(("/" + String(repeating: "a", count: 40) + "b").utf8)[...]))
    }

    /// Matching takes at most (pattern + 1) × (path + 1) steps, whatever the pattern: checked on the
    /// patterns that are worst for a backtracking matcher, up to the longest pattern and path allowed.
    @Test(arguments: [
        (String(repeating: "*a", count: 11) + "b", "/" + String(repeating: "a", count: 40)),
        (String(repeating: "*a", count: 512), String(repeating: "a", count: 8190)),
        ("*" + String(repeating: "a", count: 1023), String(repeating: "a", count: 8189) + "b"),
        (String(repeating: "?*", count: 512), String(repeating: "x", count: 8190)),
    ])
    func globMatchingIsBoundedByPatternTimesPath(_ pattern: String, _ path: String) {
        var steps = 0
        _ = Glob.matches(Array(pattern.utf8)[...], Array(path.utf8)[...], steps: &steps)
        #expect(steps <= (pattern.utf8.count + 1) * (path.utf8.count + 1), "\(steps) steps")
        #expect(steps >= path.utf8.count, "every byte of the path is looked at")
    }

    /// Every request tries every rule, so the rules a control client can add are bounded: in number,
    /// and in the bytes of their path patterns together.
    @Test func theRulesInForceAreBounded() {
        var plan = MediaFaultPlan()
        for _ in 0..<MediaFaultPlan.mostRules {
            #expect(plan.refusal(adding: MediaFault(.changeETag)) == nil)
            _ = plan.add(MediaFault(.changeETag))
        }
        #expect(plan.refusal(adding: MediaFault(.changeETag))?.contains("at most 1000 fault rules") == true)
        var patterns = MediaFaultPlan()
        for _ in 0..<4 { _ = patterns.add(MediaFault(.changeETag, path: "/" + String(repeating: "a", count: 1023))) }
        #expect(patterns.refusal(adding: MediaFault(.changeETag, path: "/a"))?.contains("4096 bytes together") == true)
        #expect(patterns.refusal(adding: MediaFault(.changeETag)) == nil, "a rule without a path adds nothing to match")
    }

    /// The matcher agrees with the definition (a table over every split, filled from the end) on every
    /// pattern and text of up to five characters from a small alphabet.
    @Test func globsAgreeWithTheDefinition() {
        func reference(_ pattern: [UInt8], _ text: [UInt8]) -> Bool {
            // matches[i][j]: pattern[i...] matches text[j...]
            var matches = Array(repeating: Array(repeating: false, count: text.count + 1), count: pattern.count + 1)
            matches[pattern.count][text.count] = true
            for i in stride(from: pattern.count - 1, through: 0, by: -1) {
                for j in stride(from: text.count, through: 0, by: -1) {
                    switch pattern[i] {
                    case UInt8(ascii: "*"): matches[i][j] = matches[i + 1][j] || (j < text.count && matches[i][j + 1])
                    case UInt8(ascii: "?"): matches[i][j] = j < text.count && matches[i + 1][j + 1]
                    default: matches[i][j] = j < text.count && text[j] == pattern[i] && matches[i + 1][j + 1]
                    }
                }
            }
            return matches[0][0]
        }
        func all(_ alphabet: [UInt8], upTo length: Int) -> [[UInt8]] {
            var words: [[UInt8]] = [[]]
            var last: [[UInt8]] = [[]]
            for _ in 0..<length {
                last = last.flatMap { word in alphabet.map { word + [$0] } }
                words += last
            }
            return words
        }
        let patterns = all(Array("a*?".utf8), upTo: 5)
        let texts = all(Array("ab".utf8), upTo: 5)
        var disagreements: [String] = []
        for pattern in patterns {
            for text in texts where Glob.matches(pattern[...], text[...]) != reference(pattern, text) {
                disagreements.append(
                    "\(String(decoding: pattern, as: UTF8.self)) on \(String(decoding: text, as: UTF8.self))")
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(10))")
        #expect(patterns.count == 364 && texts.count == 63)
    }

    @Test func badRulesSayWhatIsWrong() {
        #expect(MediaFault(.reset).problem?.contains("afterBytes") == true)
        var negative = MediaFault(.fin)
        negative.afterFraction = 1.5
        #expect(negative.problem?.contains("afterFraction") == true)
        #expect(MediaFault(.lyingContentLength).problem?.contains("by") == true)
        #expect(MediaFault(.status).problem?.contains("400 to 599") == true)
        #expect(MediaFault(.changeETag, count: 0).problem == "count must be between 1 and 1000000000, not 0")
        #expect(MediaFault(.ignoreRange).problem == nil)
    }
}

/// Each fault over real sockets, seen by curl.
@Suite struct MediaFaultCurlTests {
    static let body = MediaServerCurlTests.body
    static let path = "/photos/dailyphoto.jpg"

    func withServer(_ test: (MediaServer, URL, Timeline) async throws -> Void) async throws {
        let root = try ScenarioFixtures.mediaRoot(photo: Self.body)
        var configuration = MediaServerConfiguration(root: root)
        configuration.port = 0
        let timeline = Timeline()
        let server = try await MediaServer.start(configuration: configuration, timeline: timeline)
        do {
            try await test(server, root, timeline)
        } catch {
            await server.close()
            throw error
        }
        await server.close()
    }

    func curl(_ arguments: [String]) async throws -> ChildProcess {
        try await ChildProcess.run("curl", ["--silent", "--show-error"] + arguments, timeout: .seconds(60))
    }

    func fault(_ kind: MediaFault.Kind, _ configure: (inout MediaFault) -> Void = { _ in }) -> MediaFault {
        var fault = MediaFault(kind, path: Self.path, count: 1)
        configure(&fault)
        return fault
    }

    @Test func aResetAtAChosenByteThenCurlResumesToAnIdenticalFile() async throws {
        try await withServer { server, root, timeline in
            try server.addFault(fault(.reset) { $0.afterBytes = 123_456 })
            let output = root.appendingPathComponent("download")
            let cut = try await curl(["--output", output.path, server.url + Self.path])
            #expect(cut.status == 56, "recv failure: \(cut.transcript)")
            #expect(cut.standardError.lowercased().contains("reset"), "\(cut.transcript)")
            #expect(try Data(contentsOf: output).count == 123_456)
            let resumed = try await curl(["--continue-at", "-", "--output", output.path, server.url + Self.path])
            #expect(resumed.status == 0, "\(resumed.transcript)")
            #expect(try Data(contentsOf: output) == Data(Self.body))
            let fired = try #require(timeline.events.first { $0.kind == .mediaFaultFired })
            #expect(fired["how"] == "RST" && fired["atByte"] == "123456" && fired["of"] == "200000")
        }
    }

    @Test func aFINHalfwayLeavesCurlWithHalfTheBody() async throws {
        try await withServer { server, root, timeline in
            try server.addFault(fault(.fin) { $0.afterFraction = 0.5 })
            let output = root.appendingPathComponent("half")
            let result = try await curl(["--output", output.path, server.url + Self.path])
            #expect(result.status == 18, "partial file: \(result.transcript)")
            #expect(try Data(contentsOf: output) == Data(Self.body[0..<100_000]))
            #expect(
                timeline.events.contains {
                    $0.kind == .mediaFaultFired && $0["how"] == "FIN" && $0["atByte"] == "100000"
                })
        }
    }

    @Test func aChangedETagMakesAResumeWithIfRangeStartOver() async throws {
        try await withServer { server, root, _ in
            let first = try await curl(["--head", server.url + Self.path])
            let etag = try #require(
                first.standardOutput.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("etag:") }
            )
            .dropFirst("etag:".count).trimmingCharacters(in: .whitespaces)
            try server.addFault(fault(.changeETag))
            let output = root.appendingPathComponent("resume")
            try Data(Self.body[0..<50_000]).write(to: output)
            let result = try await curl([
                "--dump-header", "-", "--range", "50000-", "-H", "If-Range: \(etag)", "--output", output.path,
                server.url + Self.path,
            ])
            #expect(result.standardOutput.hasPrefix("HTTP/1.1 200"), "a new ETag: the whole body again")
            #expect(!result.standardOutput.contains(etag))
            #expect(try Data(contentsOf: output) == Data(Self.body))
            // The change sticks: the next plain request sees the new validator too.
            let after = try await curl(["--head", server.url + Self.path])
            #expect(!after.standardOutput.contains(etag))
        }
    }

    @Test func a503WithRetryAfterThenRecovery() async throws {
        try await withServer { server, _, _ in
            try server.addFault(
                fault(.status) {
                    $0.status = 503
                    $0.retryAfter = 2
                    $0.count = 2
                })
            var statuses: [String] = []
            for _ in 0..<3 {
                let result = try await curl(["--dump-header", "-", "--output", "/dev/null", server.url + Self.path])
                statuses.append(String(result.standardOutput.prefix(12)))
                if statuses.count == 1 { #expect(result.standardOutput.lowercased().contains("retry-after: 2")) }
            }
            #expect(statuses == ["HTTP/1.1 503", "HTTP/1.1 503", "HTTP/1.1 200"])
            #expect(server.faultRules.first?.fired == 2)
        }
    }

    @Test func closingBeforeAnyHeaderIsAnEmptyReply() async throws {
        try await withServer { server, _, _ in
            try server.addFault(fault(.closeBeforeHeaders))
            let result = try await curl(["--output", "/dev/null", server.url + Self.path])
            #expect(result.status == 52, "empty reply: \(result.transcript)")
        }
    }

    @Test func contentLengthsThatLie() async throws {
        try await withServer { server, root, _ in
            try server.addFault(fault(.lyingContentLength) { $0.by = -100 })
            let short = root.appendingPathComponent("short")
            let silent = try await curl(["--output", short.path, server.url + Self.path])
            #expect(silent.status == 0, "a shorter length goes unnoticed: \(silent.transcript)")
            #expect(try Data(contentsOf: short) == Data(Self.body[0..<199_900]))
            try server.addFault(fault(.lyingContentLength) { $0.by = 100 })
            let long = try await curl(["--output", "/dev/null", server.url + Self.path])
            #expect(long.status == 18, "a longer one leaves the client short: \(long.transcript)")
        }
    }

    @Test func noContentLengthMeansAnUnknownSize() async throws {
        try await withServer { server, root, _ in
            try server.addFault(fault(.noContentLength))
            let output = root.appendingPathComponent("chunked")
            let result = try await curl(["--dump-header", "-", "--output", output.path, server.url + Self.path])
            let headers = result.standardOutput.lowercased()
            #expect(!headers.contains("content-length:"))
            #expect(headers.contains("transfer-encoding: chunked"))
            #expect(try Data(contentsOf: output) == Data(Self.body))
        }
    }

    @Test func aServerWithoutRangesAnswersTheWholeBody() async throws {
        try await withServer { server, root, _ in
            try server.addFault(fault(.ignoreRange))
            let output = root.appendingPathComponent("whole")
            let result = try await curl([
                "--dump-header", "-", "--range", "100-199", "--output", output.path, server.url + Self.path,
            ])
            #expect(result.standardOutput.hasPrefix("HTTP/1.1 200"))
            #expect(!result.standardOutput.lowercased().contains("accept-ranges"))
            #expect(try Data(contentsOf: output).count == 200_000)
        }
    }

    /// GETs the path, reads the header block and 1000 body bytes (waiting as long as they take), then
    /// waits a second for more and says what came.
    static let stallClient = """
        import socket, sys
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
        s.settimeout(60)
        s.sendall(b"GET " + sys.argv[2].encode() + b" HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
        data = b""
        while b"\\r\\n\\r\\n" not in data or len(data.split(b"\\r\\n\\r\\n", 1)[1]) < 1000:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        body = len(data.split(b"\\r\\n\\r\\n", 1)[1]) if b"\\r\\n\\r\\n" in data else 0
        s.settimeout(1)
        try:
            more = s.recv(65536)
            print("body %d, then %s" % (body, "%d more bytes" % len(more) if more else "closed"))
        except socket.timeout:
            print("body %d, then nothing for 1 s" % body)
        """

    @Test func aStallSendsNothingMoreUntilTheClientGivesUp() async throws {
        try await withServer { server, root, timeline in
            try server.addFault(fault(.stall) { $0.afterBytes = 1000 })
            // The client reads the header and the first 1000 bytes however long they take, then finds
            // that nothing more comes for a second.
            let client = try await ChildProcess.run(
                PackagePaths.python, ["-c", Self.stallClient, "\(server.port)", Self.path])
            #expect(client.standardOutput == "body 1000, then nothing for 1 s\n", "\(client.transcript)")
            #expect(timeline.events.contains { $0.kind == .mediaFaultFired && $0["how"] == "stall" })
            // The server still serves everyone else meanwhile and afterwards.
            let next = try await curl(["--output", "/dev/null", "--write-out", "%{http_code}", server.url + Self.path])
            #expect(next.standardOutput == "200")
        }
    }

    @Test func theControlAPIAddsListsAndRemovesFaults() async throws {
        try await withServer { server, _, _ in
            let added = try await curl([
                "-X", "POST", "--data", #"{"fault":"status","status":500,"path":"/photos/*","count":1}"#,
                "--write-out", "\n%{http_code}", server.controlURL + "/faults",
            ])
            #expect(added.standardOutput.hasSuffix("\n201"), "\(added.transcript)")
            #expect(added.standardOutput.hasPrefix(#"{"id":1}"#))
            let refused = try await curl([
                "-X", "POST", "--data", #"{"fault":"reset"}"#, "--write-out", "\n%{http_code}",
                server.controlURL + "/faults",
            ])
            #expect(refused.standardOutput.hasSuffix("\n400"))
            #expect(refused.standardOutput.contains("afterBytes"), "\(refused.transcript)")
            let unknown = try await curl([
                "-X", "POST", "--data", #"{"fault":"explode"}"#, "--write-out", "\n%{http_code}",
                server.controlURL + "/faults",
            ])
            #expect(unknown.standardOutput.hasSuffix("\n400"))
            #expect(unknown.standardOutput.contains("closeBeforeHeaders"), "names the kinds: \(unknown.transcript)")
            _ = try await curl(["--output", "/dev/null", server.url + Self.path])
            let listed = try await curl([server.controlURL + "/faults"])
            #expect(listed.standardOutput.contains(#""fired":1"#), "\(listed.transcript)")
            let deleted = try await curl([
                "-X", "DELETE", "--write-out", "%{http_code}", server.controlURL + "/faults/1",
            ])
            #expect(deleted.standardOutput == "204")
            #expect(server.faultRules.isEmpty)
        }
    }
}
