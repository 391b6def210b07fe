import Foundation
import TestSupport
import Testing

@testable import HarnessCore

/// harness.yml's services are the libraries' configurations with the tutorial's defaults on top, and
/// docs/harness-yml.md shows those defaults: the block it shows, read as a file, changes nothing.
@Suite struct DocumentedDefaultsTests {
    /// The `services:` block of the page's reference file, without its example fault rule.
    func documentedServices() throws -> String {
        let page = try String(
            contentsOf: PackagePaths.root.appendingPathComponent("docs/harness-yml.md"), encoding: .utf8)
        let lines = page.components(separatedBy: "\n")
        let start = try #require(lines.firstIndex { $0.hasPrefix("services:") })
        let end = try #require(lines[start...].firstIndex { $0.hasPrefix("apps:") })
        return lines[start..<end].filter { !$0.contains("faults:") && !$0.contains("{fault:") }
            .joined(separator: "\n")
    }

    @Test func theDefaultsThePageShowsAreTheDefaults() throws {
        let directory = try PackagePaths.temporaryDirectory()
        let file = directory.appendingPathComponent("harness.yml").path
        let documented = try ConfigurationLoader.parse("version: 1\n" + (try documentedServices()), file: file)
        let defaults = try ConfigurationLoader.parse("version: 1\n", file: file)
        var shown = "", expected = ""
        dump(documented.services, to: &shown)
        dump(defaults.services, to: &expected)
        #expect(shown == expected)
        // What the tutorial's app and backend are given, whatever the libraries' own defaults.
        #expect(defaults.services.parse.masterKey == "nasa-tv-master-key")
        #expect(defaults.services.parse.clientKey == "nasa-tv-client-key")
        #expect(defaults.services.media.root.path == directory.appendingPathComponent("Fixtures/media").path)
    }

    @Test func aChangedKeyIsSeen() throws {
        // The comparison above can fail: one key from the page, changed, makes a difference.
        let file = try PackagePaths.temporaryDirectory().appendingPathComponent("harness.yml").path
        let changed = try documentedServices().replacingOccurrences(
            of: "masterKey: nasa-tv-master-key", with: "masterKey: another")
        let documented = try ConfigurationLoader.parse("version: 1\n" + changed, file: file)
        let defaults = try ConfigurationLoader.parse("version: 1\n", file: file)
        var shown = "", expected = ""
        dump(documented.services, to: &shown)
        dump(defaults.services, to: &expected)
        #expect(shown != expected)
    }
}
