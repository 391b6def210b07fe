import Foundation
import Recording
import TestSupport
import Testing

@testable import HarnessCore

#if canImport(Glibc)
import Glibc
#endif

/// The door in front of a backend, recording: nginx as the backend (nobody here wrote it), curl as the
/// app. What the app gets is what the backend said, and the cassette keeps each exchange.
@Suite struct BackendDoorTests {
    @Test func theDoorPassesTheBackendsAnswerAsItCameAndRecordsIt() async throws {
        let root = try PackagePaths.temporaryDirectory("door-root")
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("photos"), withIntermediateDirectories: true)
        try "a photo".write(to: root.appendingPathComponent("photos/a.txt"), atomically: true, encoding: .utf8)
        let nginx = try await ListeningPeer.nginx(root: root)
        let cassette = try PackagePaths.temporaryDirectory("door-cassette").appendingPathComponent("cassette")
        let recorder = try CassetteRecorder(directory: cassette, redactor: Redactor())
        let door = try await BackendDoor.open(name: "api", mode: .forward(port: nginx.port, recorder: recorder))
        let (redirect, file, post) = try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await door.run() }
            defer { group.cancelAll() }
            // nginx sends a folder asked without its slash to the folder: the app sees that, not the
            // folder's listing that a client following redirects would fetch.
            let redirect = try await CurlExchange.run(["--include", door.url + "/photos"])
            let file = try await CurlExchange.run([door.url + "/photos/a.txt"])
            let post = try await CurlExchange.run(["--data-binary", "cmd=join&name=Alice", door.url + "/photos/a.txt"])
            return (redirect, file, post)
        }
        await door.close()
        nginx.process.send(SIGTERM)
        _ = await nginx.process.waitForExit()
        #expect(redirect.status == 301, "\(redirect)")
        #expect(redirect.body.lowercased().contains("location: http://127.0.0.1"), "\(redirect)")
        #expect(file.status == 200 && file.body == "a photo", "\(file)")
        #expect(post.status == 405, "\(post)")

        try recorder.close(CassetteMeta(scenario: nil, harnessYmlSha256: nil, seeds: [:], recordedAt: "now"))
        let entries = try Cassette.open(cassette).har.log.entries
        #expect(entries.map(\.response.status) == [301, 200, 405])
        #expect(entries.allSatisfy { $0.link == "app→backend" && $0.service == "backend:api" })
        #expect(
            entries.map(\.request.url) == Array(repeating: "backend://api/photos", count: 1) + [
                "backend://api/photos/a.txt", "backend://api/photos/a.txt",
            ])
        #expect(entries[2].request.postData?.text == "cmd=join&name=Alice")
    }
}
