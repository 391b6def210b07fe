import ArgumentParser
import Foundation
import HarnessCore

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report", abstract: "Work with the reports of runs.", subcommands: [Merge.self])

    struct Merge: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Join the report folders of a sharded run into one.",
            discussion: """
                Each folder is a batch's report folder (--report-dir of 'harness run --all --shard I/N'). \
                The joined folder has every scenario's folder, and one junit.xml, summary.json and \
                index.html (the whole network matrix). Folders from different commits or harness.yml \
                contents are refused, as is a scenario that two folders ran. Exit 0 joined, 2 refused.
                """)

        @Argument(help: ArgumentHelp("The report folders to join.", valueName: "dir"))
        var folders: [String] = []

        @Option(name: .shortAndLong, help: ArgumentHelp("The folder to write (new or empty).", valueName: "dir"))
        var output: String

        func run() throws {
            do {
                let (count, notes) = try ReportMerge.merge(folders, into: output)
                for note in notes { say("note: " + note) }
                say("joined \(folders.count) report folders: \(count) scenarios in \(output)")
            } catch let error as MergeError {
                fail(error.description, code: 2)
            } catch {
                fail("\(output): the joined report cannot be written (\(error.localizedDescription))", code: 2)
            }
        }
    }
}
