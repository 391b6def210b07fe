import Foundation
import Recording

/// A cassette's files as the harness reads them from outside: `traffic.har` (a mitmproxy or browser
/// export too) through the reader's checks, then a replay's matching against its entries; the same
/// bytes as a recording's journal cut short (what recovery after kill -9 reads).
enum CassetteTarget {
    static func run(_ bytes: [UInt8]) {
        let data = Data(bytes)
        _ = JournalReading.read(data)
        guard let har = try? HARReader.read(data, file: "fuzz.har") else { return }
        var playback = Playback(entries: har.log.entries)
        for entry in har.log.entries.prefix(16) {
            let headers = entry.request.headers.prefix(32).map { (name: $0.name, value: $0.value) }
            _ = playback.answer(method: entry.request.method, target: entry.request.url, headers: headers)
        }
        _ = playback.answer(method: "GET", target: "/photos/dailyphoto.jpg", headers: [("Range", "bytes=0-")])
    }
}
