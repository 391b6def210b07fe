import Foundation

/// How a cassette's traffic becomes one self-contained HAR, decided before a byte is written: the
/// document as pieces of JSON, with the bodies that stream from `bodies/` between them, or why it cannot
/// be written as a HAR the harness reads back.
///
/// The harness reads an inline body of at most ``HARReader/largestInlineBody`` bytes and a document of at
/// most ``HARReader/largestDocument``: an export holding more would be a file its own reader refuses, so
/// it is refused instead, before anything is read or written.
struct HARExportPlan: Equatable {
    enum Piece: Equatable {
        /// JSON text, as is.
        case json(Data)
        /// Entry `entry`'s body file, `size` bytes, as base64 (the quotes around it are in the JSON).
        case body(entry: Int, size: Int)
    }

    var pieces: [Piece]
    /// The bytes the file will hold.
    var size: Int

    /// The characters of `size` bytes as base64, with padding.
    static func base64Length(_ size: Int) -> Int { (size + 2) / 3 * 4 }

    /// The plan for `har`, whose entries in `bodyFiles` (index: size) have their body in a file.
    ///
    /// - Parameters:
    ///   - harFile: the HAR's path, for errors.
    ///   - marker: stands in for each body while the rest is encoded; a random one by default, so that
    ///     nothing in the cassette can be mistaken for it.
    /// - Throws: ``CassetteError`` (`.tooLargeToExport`) naming the entry and the limit, or the document's
    ///   size and the limit.
    static func make(
        _ har: HAR, bodyFiles: [Int: Int], harFile: String, marker: String = "pushharness-export-\(UUID().uuidString)-"
    ) throws -> HARExportPlan {
        var skeleton = har
        for index in bodyFiles.keys.sorted() {
            let size = bodyFiles[index] ?? 0
            let name = har.log.entries[index].response.content.file ?? ""
            guard size <= HARReader.largestInlineBody else {
                throw CassetteError(
                    file: harFile, jsonPath: "$.log.entries[\(index)].response.content._file",
                    problem: "the body \(name) is \(size) bytes; an exported HAR holds every body inline, and the "
                        + "harness reads an inline body of at most \(HARReader.largestInlineBody) bytes (64 MiB), so "
                        + "this export could not be read back: serve or replay the cassette folder itself, which "
                        + "needs no export",
                    kind: .tooLargeToExport)
            }
            skeleton.log.entries[index].response.content.text = "\(marker)\(index)"
            skeleton.log.entries[index].response.content.encoding = "base64"
            skeleton.log.entries[index].response.content.file = nil
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        let encoded: Data
        do {
            encoded = try encoder.encode(skeleton)
        } catch {
            throw CassetteError(file: harFile, problem: "cannot be encoded (\(error.localizedDescription))")
        }
        var pieces: [Piece] = []
        var size = 0
        var from = encoded.startIndex
        for index in bodyFiles.keys.sorted() {
            // The closing quote stays, to start the next piece: `-1"` is not the start of `-12"`.
            let text = Data("\(marker)\(index)\"".utf8)
            guard let found = encoded.range(of: text, in: from..<encoded.endIndex) else {
                throw CassetteError(
                    file: harFile, jsonPath: "$.log.entries[\(index)].response.content",
                    problem: "could not be laid out for export")
            }
            pieces.append(.json(encoded[from..<found.lowerBound]))
            let bodySize = bodyFiles[index] ?? 0
            pieces.append(.body(entry: index, size: bodySize))
            size += found.lowerBound - from + base64Length(bodySize)
            from = found.upperBound - 1
        }
        pieces.append(.json(encoded[from..<encoded.endIndex]))
        size += encoded.endIndex - from
        guard size <= HARReader.largestDocument else {
            throw CassetteError(
                file: harFile,
                problem: "exported with every body inline would be \(size) bytes, and the harness reads a HAR of "
                    + "at most \(HARReader.largestDocument) bytes (1 GiB), so this export could not be read back: "
                    + "serve or replay the cassette folder itself, which needs no export",
                kind: .tooLargeToExport)
        }
        return HARExportPlan(pieces: pieces, size: size)
    }
}
