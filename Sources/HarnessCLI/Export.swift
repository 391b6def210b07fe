import ArgumentParser
import Foundation
import Recording

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a cassette's traffic as one self-contained HAR file, every body inline.",
        discussion: "Exit 0 when written, 2 when the cassette cannot be read or the file cannot be written.")

    @Argument(help: ArgumentHelp("The cassette folder.", valueName: "dir"))
    var cassette: String

    @Option(name: .shortAndLong, help: ArgumentHelp("The HAR file to write.", valueName: "file"))
    var output: String

    func run() throws {
        do {
            let opened = try Cassette.open(URL(fileURLWithPath: cassette))
            let entries = try HARExport.selfContained(opened, to: URL(fileURLWithPath: output))
            say("\(output): \(entries) entries, every body inline")
        } catch let error as CassetteError {
            fail(error.description, code: 2)
        }
    }
}
