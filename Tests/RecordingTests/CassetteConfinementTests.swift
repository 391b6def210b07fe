import Crypto
import Foundation
import Recording
import Testing

/// Everything a cassette names is read from inside it: a symbolic link among its files and folders is
/// refused, naming its path, wherever it points; and a body file's bytes are checked against the SHA-256
/// that names it before they are served (``Cassette/openBody(of:)``, which the media server calls before
/// it sends the head) or exported. Real cassettes on disk, recorded by ``CassetteRecorder``.
struct CassetteConfinementTests {
    /// A closed cassette with every kind of file: an inline body (entry 0), a stored one (entry 1), a
    /// timeline and a transcript.
    static func cassette() throws -> (folder: URL, stored: Data, digest: String) {
        let folder = try TemporaryFolder.make()
        let recorder = try CassetteRecorder(directory: folder, redactor: Redactor())
        let small = recorder.exchange(
            service: "media", link: "device→media", connection: nil, method: "GET", url: "http://h/small.txt",
            httpVersion: "HTTP/1.1", headers: [])
        small.head(status: 200, statusText: "OK", headers: [("Content-Type", "text/plain")])
        Data("a small body".utf8).withUnsafeBytes { small.write($0) }
        small.finish()
        let stored = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        let large = recorder.exchange(
            service: "media", link: "device→media", connection: nil, method: "GET", url: "http://h/photo.jpg",
            httpVersion: "HTTP/1.1", headers: [])
        large.head(status: 200, statusText: "OK", headers: [("Content-Type", "image/jpeg")])
        stored.withUnsafeBytes { large.write($0) }
        large.finish()
        let meta = CassetteMeta(scenario: "s", harnessYmlSha256: nil, seeds: [:], recordedAt: "now")
        try recorder.close(meta, timeline: Data())
        let transcripts = folder.appendingPathComponent("transcripts")
        try FileManager.default.createDirectory(at: transcripts, withIntermediateDirectories: true)
        try Data("{\"at\":1,\"from\":\"app\",\"line\":\"{}\"}\n".utf8).write(
            to: transcripts.appendingPathComponent("app.jsonl"))
        return (folder, stored, sha256(stored))
    }

    static func sha256(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }

    /// Moves `name` out of the cassette, to a folder of its own, and puts a link to it in its place: the
    /// file the link names is whole, so only the link can be why it is refused.
    @discardableResult
    static func replaceWithLink(_ name: String, in folder: URL) throws -> URL {
        let inside = folder.appendingPathComponent(name)
        let outside = try TemporaryFolder.make().appendingPathComponent(inside.lastPathComponent)
        try FileManager.default.moveItem(at: inside, to: outside)
        try FileManager.default.createSymbolicLink(at: inside, withDestinationURL: outside)
        return inside
    }

    /// Nothing at `output`, and nothing half-written beside it.
    static func nothingWritten(at output: URL) throws -> Bool {
        let beside = try FileManager.default.contentsOfDirectory(atPath: output.deletingLastPathComponent().path)
        return !beside.contains { $0 == output.lastPathComponent || $0.contains(".export-") }
    }

    @Test func aCassetteWithoutLinksOpensAndItsStoredBodyIsReadFromTheCheckedFile() throws {
        let (folder, stored, digest) = try Self.cassette()
        let cassette = try Cassette.open(folder)
        #expect(try cassette.openBody(of: 0) == nil, "an inline body has no file")
        let file = try #require(try cassette.openBody(of: 1))
        #expect(file.url.lastPathComponent == digest)
        #expect(file.size == stored.count)
        var bytes = Data(count: stored.count)
        let read = try bytes.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        #expect(read == stored.count)
        #expect(bytes == stored)
        #expect(try cassette.openBody(of: 1) != nil, "checked once, opened again")
    }

    @Test(arguments: ["meta.json", "traffic.har", "timeline.jsonl", "transcripts", "transcripts/app.jsonl", "bodies"])
    func aLinkAmongTheCassettesFilesIsRefusedNamingIt(name: String) throws {
        let (folder, _, _) = try Self.cassette()
        let link = try Self.replaceWithLink(name, in: folder)
        let error = try #require(throws: CassetteError.self) { try Cassette.open(folder) }
        #expect(error.kind == .symbolicLink)
        #expect(error.file == link.path)
        #expect(error.description.contains("symbolic link"))
    }

    @Test func aBodyFileThatIsALinkIsRefusedNamingIt() throws {
        let (folder, _, digest) = try Self.cassette()
        let link = try Self.replaceWithLink("bodies/\(digest)", in: folder)
        let error = try #require(throws: CassetteError.self) { try Cassette.open(folder) }
        #expect(error.kind == .symbolicLink)
        #expect(error.file == link.path)
    }

    @Test func theCassetteFolderItselfMayBeALinkTheUserNamed() throws {
        let (folder, stored, _) = try Self.cassette()
        let link = try TemporaryFolder.make().appendingPathComponent("cassette")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: folder)
        let cassette = try Cassette.open(link)
        let file = try #require(try cassette.openBody(of: 1))
        #expect(file.size == stored.count)
    }

    @Test func aBodyLinkedAfterTheCassetteWasOpenedIsNeitherServedNorExported() throws {
        let (folder, _, digest) = try Self.cassette()
        let cassette = try Cassette.open(folder)
        let link = try Self.replaceWithLink("bodies/\(digest)", in: folder)

        let served = try #require(throws: CassetteError.self) { try cassette.openBody(of: 1) }
        #expect(served.kind == .symbolicLink)
        #expect(served.file == link.path)

        let output = try TemporaryFolder.make().appendingPathComponent("export.har")
        let exported = try #require(throws: CassetteError.self) { try HARExport.selfContained(cassette, to: output) }
        #expect(exported.kind == .symbolicLink)
        #expect(exported.file == link.path)
        #expect(try Self.nothingWritten(at: output))
    }

    @Test func aBodiesFolderLinkedAfterOpeningIsRefusedNamingIt() throws {
        let (folder, _, _) = try Self.cassette()
        let cassette = try Cassette.open(folder)
        let link = try Self.replaceWithLink("bodies", in: folder)
        let error = try #require(throws: CassetteError.self) { try cassette.openBody(of: 1) }
        #expect(error.kind == .symbolicLink)
        #expect(error.file == link.path)
    }

    @Test func aTimelineLinkedAfterOpeningIsNotRead() throws {
        let (folder, _, _) = try Self.cassette()
        let cassette = try Cassette.open(folder)
        #expect(try cassette.timeline().isEmpty)
        let link = try Self.replaceWithLink("timeline.jsonl", in: folder)
        let error = try #require(throws: CassetteError.self) { try cassette.timeline() }
        #expect(error.kind == .symbolicLink)
        #expect(error.file == link.path)
    }

    @Test func aBodyThatDoesNotMatchItsNameIsRefusedBeforeServingAndExporting() throws {
        let (folder, stored, digest) = try Self.cassette()
        let body = folder.appendingPathComponent("bodies/\(digest)")
        // The same size, so that only its digest can tell.
        let altered = Data(repeating: 0x5A, count: stored.count)
        try altered.write(to: body)
        let cassette = try Cassette.open(folder)

        let served = try #require(throws: CassetteError.self) { try cassette.openBody(of: 1) }
        #expect(served.kind == .digestMismatch)
        #expect(served.file == body.path)
        #expect(served.problem.contains(digest))
        #expect(served.problem.contains(Self.sha256(altered)))

        let output = try TemporaryFolder.make().appendingPathComponent("export.har")
        let exported = try #require(throws: CassetteError.self) { try HARExport.selfContained(cassette, to: output) }
        #expect(exported.kind == .digestMismatch)
        #expect(exported.file == body.path)
        #expect(try Self.nothingWritten(at: output))
    }

    @Test func aBodyReplacedAfterItsCheckIsCheckedAgain() throws {
        let (folder, stored, digest) = try Self.cassette()
        let cassette = try Cassette.open(folder)
        let checked = try #require(try cassette.openBody(of: 1))
        // Another file in its place (written beside it and renamed), of the same size.
        let body = folder.appendingPathComponent("bodies/\(digest)")
        try Data(repeating: 0x11, count: stored.count).write(to: body, options: .atomic)
        let error = try #require(throws: CassetteError.self) { try cassette.openBody(of: 1) }
        #expect(error.kind == .digestMismatch)
        #expect(error.file == body.path)
        withExtendedLifetime(checked) {}
    }

    @Test func aDigestBesideTheBodyThatIsNotItsNameIsRefusedAtOpen() throws {
        let (folder, _, _) = try Self.cassette()
        let traffic = folder.appendingPathComponent("traffic.har")
        var har = try HARReader.read(contentsOf: traffic)
        har.log.entries[1].response.content.sha256 = String(repeating: "0", count: 64)
        try JSONEncoder().encode(har).write(to: traffic)
        let error = try #require(throws: CassetteError.self) { try Cassette.open(folder) }
        #expect(error.file == traffic.path)
        #expect(error.jsonPath == "$.log.entries[1].response.content._sha256")
    }
}
