import Foundation
import HarnessTimeline
import NIOHTTP1
import TestSupport
import Testing

@testable import MediaServer

/// The access log's writer: lines land whole and in order whichever path writes them (the writer's, or
/// the request's own past the cap), and a write the file refuses is on the timeline.
struct AccessLogTests {
    static func exchange(_ number: Int) -> Exchange {
        var exchange = Exchange(
            request: HTTPRequestHead(version: .http1_1, method: .GET, uri: "/photos/\(number).jpg"), client: "127.0.0.1"
        )
        exchange.status = 200
        exchange.bodyBytes = number
        return exchange
    }

    /// Records `exchange` and returns its line, made from the same exchange: its time is the one the
    /// exchange was made at, so a second passing in between changes nothing.
    func record(_ exchange: Exchange, in log: AccessLog) -> String {
        log.record(exchange)
        return AccessLog.line(exchange)
    }

    @Test func linesPastTheCapAreWrittenByTheRequestInTheOrderTheyCame() async throws {
        let folder = try PackagePaths.temporaryDirectory()
        let url = folder.appendingPathComponent("logs/access_log")
        let log = try AccessLog(url: url, timeline: Timeline())
        // No writer running: the cap is the only thing that writes before close.
        var expected = ""
        var number = 0
        while expected.utf8.count <= AccessLog.pendingCap {
            number += 1
            expected += record(Self.exchange(number), in: log)
        }
        let before = try Data(contentsOf: url).count
        #expect(before == expected.utf8.count, "the request that reached the cap wrote what had gathered")
        for extra in 1...3 {
            expected += record(Self.exchange(number + extra), in: log)
        }
        await log.close()
        #expect(try String(contentsOf: url, encoding: .utf8) == expected)
    }

    @Test func theWriterWritesWhatGathersWhileItRuns() async throws {
        let folder = try PackagePaths.temporaryDirectory()
        let url = folder.appendingPathComponent("access_log")
        let (writes, wrote) = AsyncStream.makeStream(of: Int.self)
        let log = try AccessLog(url: url, timeline: Timeline()) { wrote.yield($0) }
        // Cancelled and awaited below.
        let writer = Task { await log.run() }
        var expected = ""
        var number = 0
        while expected.utf8.count < AccessLog.bufferSize {
            number += 1
            expected += record(Self.exchange(number), in: log)
        }
        // 32 KB gathered: the writer is woken and writes them, with no close.
        let size = expected.utf8.count
        // The writer says what each write put in the file: waited for until all of it is there (the
        // deadline only ends a writer that never writes).
        let written = try await withDeadline(.seconds(60), "the writer's writes of the 32 KB gathered") {
            var written = 0
            for await bytes in writes {
                written += bytes
                if written >= size { break }
            }
            return written
        }
        #expect(written == size, "the writer wrote the 32 KB gathered, no more, before any close")
        #expect(try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int == size)
        writer.cancel()
        await writer.value
        await log.close()
        #expect(try String(contentsOf: url, encoding: .utf8) == expected)
    }

    @Test func aWriteTheFileRefusesIsOnTheTimeline() async throws {
        let timeline = Timeline()
        // Linux's /dev/full refuses every write with ENOSPC.
        let log = try AccessLog(url: URL(fileURLWithPath: "/dev/full"), timeline: timeline)
        let line = record(Self.exchange(1), in: log)
        await log.close()
        let failed = timeline.events.filter { $0.kind == .mediaAccessLogFailed }
        #expect(failed.count == 1, "\(failed)")
        #expect(failed.first?.attributes["bytes"] == "\(line.utf8.count)")
        #expect(failed.first?.attributes["path"] == "/dev/full")
    }
}
