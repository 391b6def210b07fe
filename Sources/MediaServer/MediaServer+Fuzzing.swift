import Foundation
import HarnessTimeline

/// The media server's decisions on a request, reachable by the fuzzer (`Sources/HarnessFuzzer`): the
/// path's resolution, `Range` and the conditionals, fault-rule globs, and the fault rules and settings
/// a control client sends, with the arithmetic the server then does on them.
@_spi(Fuzzing) public enum MediaServerFuzzing {
    /// A root holding one small file, made once per process.
    static let root: String = {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("media-fuzz-\(getpid())")
        try? FileManager.default.createDirectory(
            at: directory.appendingPathComponent("photos"), withIntermediateDirectories: true)
        try? Data(repeating: 7, count: 1000).write(to: directory.appendingPathComponent("photos/dailyphoto.jpg"))
        return directory.resolvingSymlinksInPath().path
    }()

    /// `METHOD target` on the first line, `name: value` header lines, an empty line, then a body that
    /// is tried as a fault rule and as settings.
    public static func request(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        let parts = text.split(separator: "\n\n", maxSplits: 1, omittingEmptySubsequences: false)
        let lines = (parts.first ?? "").split(separator: "\n", omittingEmptySubsequences: false)
        let target =
            lines.first.map { line in String(line.split(separator: " ").dropFirst().first ?? line[...]) } ?? "/"
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        let resource = MediaResource(root: root, path: target)
        for length in [0, 1, 1000, 437_316, resource?.length ?? 2] {
            _ = ByteRangeRequest(header: headers["range"], length: length)
            let validators = ResourceValidators(
                etag: "\"5f3a\"", lastModified: Date(timeIntervalSince1970: 1_700_000_000), length: length)
            _ = MediaAnswer.decide(isGet: true, validators: validators) { headers[$0] }
            _ = MediaAnswer.decide(isGet: false, validators: validators) { headers[$0] }
        }
        let pattern = Array((headers["x-glob"] ?? "*").utf8)
        _ = Glob.matches(pattern[...], Array(target.utf8)[...])
        if parts.count > 1 { controlBody(Array(parts[1].utf8), path: target) }
    }

    /// A fault rule or settings as a control client sends them; what passes the checks is used as the
    /// server would use it.
    public static func controlBody(_ bytes: [UInt8], path: String = "/photos/dailyphoto.jpg") {
        let data = Data(bytes)
        if let fault = try? JSONDecoder().decode(MediaFault.self, from: data), fault.problem == nil {
            var plan = MediaFaultPlan()
            _ = plan.add(fault)
            _ = plan.next(for: path)
            for length in [0, 1, 1000, Int(InputBounds.bytes.upperBound)] {
                _ = ReplyAlterations([fault]).frame(length: length)
            }
        }
        if let settings = try? MediaServerSettings.decode(data, over: MediaServerSettings()), settings.problem == nil {
            _ = settings.firstByteWait
            _ = MediaServerSettings.chunkSize(rate: settings.throttleBytesPerSecond)
            for rate in [settings.throttleBytesPerSecond, settings.serverBytesPerSecond].compactMap({ $0 }) {
                let start = ContinuousClock.now
                var bucket = TokenBucket(rate: rate, burst: settings.burstBytes ?? 1, now: start)
                _ = bucket.reserve(MediaServerSettings.chunkSize(rate: rate), now: start)
                _ = bucket.reserve(MediaServerSettings.chunkSize(rate: rate), now: start.advanced(by: .seconds(1)))
            }
        }
    }
}
