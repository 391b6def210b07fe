import Foundation

/// Reads a HAR 1.2 file, written by PushHarness or by another tool (mitmproxy, Chrome, Charles), and
/// checks what the harness relies on before anything is served from it.
public enum HARReader {
    /// The most entries one archive may hold, and the largest body inline in it: bounds on input that
    /// comes from outside, before anything is allocated for it.
    public static let mostEntries = 1_000_000
    public static let largestInlineBody = 64 << 20
    /// The largest HAR document read whole.
    public static let largestDocument = 1 << 30
    /// The longest timing, and the latest body write, an entry may have: a day, in milliseconds.
    public static let longestTiming: Double = 86_400_000

    /// The archive in `data`; `file` names it in errors.
    ///
    /// - Throws: ``CassetteError`` with the JSON path of the first problem.
    public static func read(_ data: Data, file: String) throws -> HAR {
        guard data.count <= largestDocument else {
            throw CassetteError(file: file, problem: "is \(data.count) bytes; at most \(largestDocument) are read")
        }
        var data = data
        // The spec allows a byte-order mark, which must be ignored.
        if data.starts(with: [0xEF, 0xBB, 0xBF]) { data = data.dropFirst(3) }
        let har: HAR
        do {
            har = try JSONDecoder().decode(HAR.self, from: data)
        } catch {
            throw CassetteError.decoding(error, file: file)
        }
        return try checked(har, file: file)
    }

    /// The archive at `url`.
    public static func read(contentsOf url: URL) throws -> HAR {
        let data: Data
        do {
            // Its size from the file system first: a file over the limit is not read at all, and what
            // is not a regular file (a FIFO would never end) is refused.
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            guard attributes[.type] as? FileAttributeType == .typeRegular else {
                throw CassetteError(file: url.path, problem: "is not a regular file")
            }
            let size = (attributes[.size] as? NSNumber)?.int64Value ?? 0
            guard size <= Int64(largestDocument) else {
                throw CassetteError(file: url.path, problem: "is \(size) bytes; at most \(largestDocument) are read")
            }
            data = try Data(contentsOf: url)
        } catch let error as CassetteError {
            throw error
        } catch {
            throw CassetteError(file: url.path, problem: "cannot be read (\(error.localizedDescription))")
        }
        return try read(data, file: url.path)
    }

    static func checked(_ har: HAR, file: String) throws -> HAR {
        var har = har
        func fail(_ path: String, _ problem: String) -> CassetteError {
            CassetteError(file: file, jsonPath: path, problem: problem)
        }
        guard ["1.2", "1.1"].contains(har.log.version) else {
            throw fail("$.log.version", "HAR version \"\(har.log.version)\" is not read; 1.2 (or 1.1) is")
        }
        guard har.log.entries.count <= mostEntries else {
            throw fail("$.log.entries", "holds \(har.log.entries.count) entries; at most \(mostEntries) are read")
        }
        let ours = har.log.creator.name == HAR.creatorName
        for index in har.log.entries.indices {
            let path = "$.log.entries[\(index)]"
            if !ours { har.log.entries[index] = har.log.entries[index].withoutCustomFields }
            let entry = har.log.entries[index]
            guard URL(string: entry.request.url)?.scheme != nil else {
                throw fail("\(path).request.url", "\"\(entry.request.url)\" is not an absolute URL")
            }
            // mitmproxy writes status 0 for a flow that failed before a response.
            guard (0...999).contains(entry.response.status) else {
                throw fail("\(path).response.status", "\(entry.response.status) is not an HTTP status")
            }
            for (name, value) in [
                ("send", entry.timings.send), ("wait", entry.timings.wait), ("receive", entry.timings.receive),
            ] where !(value.isFinite && value >= 0 && value <= longestTiming) {
                throw fail(
                    "\(path).timings.\(name)",
                    "must be a number of milliseconds from 0 to \(Int(longestTiming)) (a day), not \(value)")
            }
            guard entry.time.isFinite, entry.time >= 0, entry.time <= 4 * longestTiming else {
                throw fail(
                    "\(path).time",
                    "must be a number of milliseconds from 0 to \(Int(4 * longestTiming)), not \(entry.time)")
            }
            if let offset = entry.offset, !(offset.isFinite && offset >= 0 && offset <= 1e12) {
                throw fail("\(path)._offset", "must be a number of milliseconds from 0 to 10^12, not \(offset)")
            }
            try checkContent(entry.response.content, at: "\(path).response.content", fail: fail)
            try checkWrites(entry, at: path, fail: fail)
        }
        return har
    }

    private static func checkContent(
        _ content: HAR.Content, at path: String, fail: (String, String) -> CassetteError
    ) throws {
        guard content.size >= -1 else { throw fail("\(path).size", "must not be negative, not \(content.size)") }
        if let encoding = content.encoding, encoding != "base64" {
            throw fail("\(path).encoding", "\"\(encoding)\" is not read; base64 is")
        }
        if let text = content.text {
            guard text.utf8.count <= largestInlineBody * 4 / 3 + 4 else {
                throw fail("\(path).text", "an inline body may be at most \(largestInlineBody) bytes")
            }
            if content.encoding == "base64", let problem = HARBase64.problem(in: text) {
                throw fail("\(path).text", problem)
            }
        }
        if let file = content.file {
            guard BodyStore.isStoredName(file) else {
                throw fail("\(path)._file", "\"\(file)\" is not bodies/<sha256>")
            }
        }
        if let sha = content.sha256, !BodyStore.isDigest(sha) {
            throw fail("\(path)._sha256", "\"\(sha)\" is not a hex SHA-256")
        }
    }

    private static func checkWrites(_ entry: HAR.Entry, at path: String, fail: (String, String) -> CassetteError)
        throws
    {
        var total = 0.0
        for (index, write) in (entry.writes ?? []).enumerated() {
            let at = "\(path)._writes[\(index)]"
            guard write.count == 2, write[0].isFinite, write[0] >= 0, write[0] <= longestTiming,
                write[1].isFinite, write[1] >= 0, write[1] <= Double(Int32.max), write[1].rounded() == write[1]
            else {
                throw fail(at, "must be [milliseconds ≥ 0, whole bytes ≥ 0]")
            }
            total += write[1]
        }
        if entry.writes != nil, Int(total) != entry.response.bodySize {
            throw fail(
                "\(path)._writes", "adds up to \(Int(total)) bytes but response.bodySize is \(entry.response.bodySize)")
        }
        if let fault = entry.fault {
            guard ["FIN", "RST", "stall"].contains(fault.how) else {
                throw fail("\(path)._fault.how", "\"\(fault.how)\" is not FIN, RST or stall")
            }
            guard fault.atByte >= 0, fault.atByte == entry.response.bodySize else {
                throw fail(
                    "\(path)._fault.atByte", "\(fault.atByte) is not the \(entry.response.bodySize) body bytes sent")
            }
        }
    }
}
