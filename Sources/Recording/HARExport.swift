import Foundation

/// One self-contained HAR from a cassette: every body that lives in `bodies/` put inline, as base64, so
/// the file alone can be handed to a HAR viewer or another tool.
public enum HARExport {
    /// Writes the cassette's traffic to `output` with every body inline; returns how many entries.
    ///
    /// - Throws: ``CassetteError`` when a body file cannot be read or the output cannot be written.
    @discardableResult
    public static func selfContained(_ cassette: Cassette, to output: URL) throws -> Int {
        var har = cassette.har
        for index in har.log.entries.indices {
            guard let file = har.log.entries[index].response.content.file else { continue }
            let url = cassette.directory.appendingPathComponent(file)
            let data: Data
            do {
                data = try Data(contentsOf: url)
            } catch {
                throw CassetteError(
                    file: url.path, jsonPath: "$.log.entries[\(index)].response.content._file",
                    problem: "cannot be read (\(error.localizedDescription))")
            }
            har.log.entries[index].response.content.text = data.base64EncodedString()
            har.log.entries[index].response.content.encoding = "base64"
            har.log.entries[index].response.content.file = nil
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        do {
            try encoder.encode(har).write(to: output, options: .atomic)
        } catch {
            throw CassetteError(file: output.path, problem: "cannot be written (\(error.localizedDescription))")
        }
        return har.log.entries.count
    }
}
