import ArgumentParser
import Foundation
import Recording

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a cassette's traffic as one self-contained HAR file, every body inline.",
        discussion: """
            The HAR is written as the bodies are read, each checked against its SHA-256 first, in bounded \
            memory; it is one the harness reads back, so a body over 64 MiB (or a HAR over 1 GiB) is refused \
            before anything is written. Exit 0 when written; 2 when the cassette cannot be used (a symbolic \
            link in it, a body that does not match its digest), a body is too large to inline, or the file \
            cannot be written (nothing is left behind).
            """)

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
