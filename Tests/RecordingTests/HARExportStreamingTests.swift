import Foundation
import Testing

@testable import Recording

/// `harness export`: the HAR is written as the bodies are read, a chunk at a time, and is always one the
/// harness reads back; what would not be (a body over the reader's inline limit, a document over its
/// size limit) is refused before anything is read or written.
struct HARExportStreamingTests {
    @Test func anExportReadsBackAsTheSameEntriesWithEveryBodyInline() throws {
        let folder = try TemporaryFolder.make()
        let recorder = try CassetteRecorder(directory: folder, redactor: Redactor())
        // Several chunks, the last not a multiple of 3: base64 must run on across chunks.
        let large = Data((0..<(3 * HARExport.chunkSize + 1_001)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 9) })
        func get(_ path: String, _ body: Data, type: String) {
            let exchange = recorder.exchange(
                service: "media", link: "device→media", connection: recorder.connectionID(), method: "GET",
                url: "http://h\(path)", httpVersion: "HTTP/1.1", headers: [])
            exchange.head(status: 200, statusText: "OK", headers: [("Content-Type", type)])
            // As a server writes it: 64 KiB at a time.
            var offset = 0
            while offset < body.count {
                let end = min(offset + 65_536, body.count)
                body[offset..<end].withUnsafeBytes { exchange.write($0) }
                offset = end
            }
            exchange.finish()
        }
        get("/a.txt", Data("inline text".utf8), type: "text/plain")
        get("/big.mp4", large, type: "video/mp4")
        get("/empty", Data(), type: "text/plain")
        get("/big.mp4", large, type: "video/mp4")
        try recorder.close(CassetteMeta(scenario: nil, harnessYmlSha256: nil, seeds: [:], recordedAt: "now"))
        let cassette = try Cassette.open(folder)
        #expect(cassette.har.log.entries.filter { $0.response.content.file != nil }.count == 2)

        let output = try TemporaryFolder.make().appendingPathComponent("export.har")
        #expect(try HARExport.selfContained(cassette, to: output) == 4)

        var expected = cassette.har.log.entries
        for index in expected.indices {
            guard case .file(let url, _) = cassette.body(of: index) else { continue }
            expected[index].response.content.text = try Data(contentsOf: url).base64EncodedString()
            expected[index].response.content.encoding = "base64"
            expected[index].response.content.file = nil
        }
        let back = try HARReader.read(contentsOf: output)
        #expect(back.log.creator == cassette.har.log.creator)
        #expect(back.log.entries == expected)
        let alone = try Cassette.open(output)
        #expect(alone.body(of: 1) == .inline(large))
        #expect(alone.body(of: 3) == .inline(large))
        #expect(alone.body(of: 0) == .inline(Data("inline text".utf8)))
        // Written beside the output and renamed into place: nothing else is left.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: output.deletingLastPathComponent().path) == [
                "export.har"
            ])
    }

    @Test func aBodyOverTheReadersInlineLimitIsRefusedBeforeItIsRead() throws {
        let size = HARReader.largestInlineBody + 1
        // Named by a digest that is not its content's: had the body been read (and hashed) before the
        // refusal, the error would be that.
        let name = "bodies/" + String(repeating: "ab", count: 32)
        let folder = try Self.cassette(entries: [HARExportPlanTests.entry("/huge.bin", file: name, size: size)])
        // Sparse: the test writes no 64 MiB.
        try Self.sparseFile(folder.appendingPathComponent(name), size: size)
        let cassette = try Cassette.open(folder)

        let output = try TemporaryFolder.make().appendingPathComponent("export.har")
        let error = try #require(throws: CassetteError.self) { try HARExport.selfContained(cassette, to: output) }
        #expect(error.kind == .tooLargeToExport)
        #expect(error.file == folder.appendingPathComponent("traffic.har").path)
        #expect(error.jsonPath == "$.log.entries[0].response.content._file")
        #expect(error.problem.contains("\(size) bytes"))
        #expect(error.problem.contains("\(HARReader.largestInlineBody)"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: output.deletingLastPathComponent().path).isEmpty)
    }

    @Test func anOutputThatCannotBeWrittenIsNamed() throws {
        let folder = try Self.cassette(entries: [HARExportPlanTests.entry("/a", file: nil, size: 0)])
        let output = folder.appendingPathComponent("no-such-folder/export.har")
        let error = try #require(throws: CassetteError.self) {
            try HARExport.selfContained(try Cassette.open(folder), to: output)
        }
        #expect(error.file == output.path)
        #expect(error.problem.contains("cannot be written"))
    }

    /// A cassette folder holding `entries` (their body files not written).
    static func cassette(entries: [HAR.Entry]) throws -> URL {
        let folder = try TemporaryFolder.make()
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("bodies"), withIntermediateDirectories: true)
        let meta = CassetteMeta(scenario: nil, harnessYmlSha256: nil, seeds: [:], recordedAt: "now")
        try JSONEncoder().encode(meta).write(to: folder.appendingPathComponent("meta.json"))
        try JSONEncoder().encode(HARExportPlanTests.har(entries)).write(
            to: folder.appendingPathComponent("traffic.har"))
        return folder
    }

    /// A file of `size` zero bytes that takes no room: `ftruncate` past its end.
    static func sparseFile(_ url: URL, size: Int) throws {
        #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: UInt64(size))
        try handle.close()
    }
}

/// What an export will write, decided from the HAR and the body files' sizes alone.
struct HARExportPlanTests {
    static func entry(_ path: String, file: String?, size: Int) -> HAR.Entry {
        var content = HAR.Content(size: size, mimeType: "application/octet-stream")
        content.file = file
        return HAR.Entry(
            startedDateTime: "2026-11-24T08:00:00.000Z",
            request: HAR.Request(method: "GET", url: "http://h\(path)", httpVersion: "HTTP/1.1", headers: []),
            response: HAR.Response(
                status: 200, statusText: "OK", httpVersion: "HTTP/1.1", headers: [], content: content),
            timings: HAR.Timings(send: 0, wait: 0, receive: 0))
    }

    static func har(_ entries: [HAR.Entry]) -> HAR {
        HAR(log: HAR.Log(creator: HAR.Creator(name: HAR.creatorName, version: "test"), entries: entries))
    }

    static let name = "bodies/" + String(repeating: "c", count: 64)

    @Test func thePiecesAreTheJSONWithEachBodyBetweenItsQuotesAndTheSizeIsExact() throws {
        let bodies = [1: Data("hello".utf8), 2: Data((0..<10).map { UInt8($0) }), 12: Data()]
        let entries = (0..<13).map {
            Self.entry("/\($0)", file: bodies[$0] == nil ? nil : Self.name, size: bodies[$0]?.count ?? 0)
        }
        let plan = try HARExportPlan.make(
            Self.har(entries), bodyFiles: bodies.mapValues(\.count), harFile: "traffic.har", marker: "MARK-")
        let bodyPieces = plan.pieces.compactMap { piece -> Int? in
            guard case .body(let index, _) = piece else { return nil }
            return index
        }
        #expect(bodyPieces == [1, 2, 12])
        var written = Data()
        for piece in plan.pieces {
            switch piece {
            case .json(let data): written.append(data)
            case .body(let index, let size):
                #expect(bodies[index]?.count == size)
                written.append(bodies[index]?.base64EncodedData() ?? Data())
            }
        }
        #expect(written.count == plan.size)
        let back = try HARReader.read(written, file: "export.har")
        for (index, body) in bodies {
            let content = back.log.entries[index].response.content
            #expect(content.file == nil)
            #expect(content.encoding == "base64")
            #expect(Data(base64Encoded: content.text ?? "") == body)
        }
        #expect(back.log.entries[0].response.content.text == nil)
    }

    @Test func aBodyAtTheReadersInlineLimitIsPlannedAndOneByteMoreIsRefused() throws {
        let har = Self.har([Self.entry("/a", file: nil, size: 0), Self.entry("/big", file: Self.name, size: 0)])
        let limit = HARReader.largestInlineBody
        let plan = try HARExportPlan.make(har, bodyFiles: [1: limit], harFile: "traffic.har")
        #expect(plan.pieces.contains(.body(entry: 1, size: limit)))
        let error = try #require(throws: CassetteError.self) {
            try HARExportPlan.make(har, bodyFiles: [1: limit + 1], harFile: "traffic.har")
        }
        #expect(error.kind == .tooLargeToExport)
        #expect(error.file == "traffic.har")
        #expect(error.jsonPath == "$.log.entries[1].response.content._file")
        #expect(error.problem.contains(Self.name))
    }

    @Test func aDocumentOverTheReadersLimitIsRefusedThoughEachBodyFits() throws {
        // 12 bodies of 64 MiB: each fits inline, but as base64 they are over 1 GiB together.
        #expect(HARExportPlan.base64Length(HARReader.largestInlineBody) * 12 > HARReader.largestDocument)
        let entries = (0..<12).map { Self.entry("/\($0)", file: Self.name, size: 0) }
        let sizes = Dictionary(uniqueKeysWithValues: (0..<12).map { ($0, HARReader.largestInlineBody) })
        let error = try #require(throws: CassetteError.self) {
            try HARExportPlan.make(Self.har(entries), bodyFiles: sizes, harFile: "traffic.har")
        }
        #expect(error.kind == .tooLargeToExport)
        #expect(error.jsonPath.isEmpty)
        #expect(error.problem.contains("\(HARReader.largestDocument)"))
    }

    @Test func base64LengthsArePadded() {
        #expect([0, 1, 2, 3, 4, 5, 6].map(HARExportPlan.base64Length) == [0, 4, 4, 4, 8, 8, 8])
    }
}
