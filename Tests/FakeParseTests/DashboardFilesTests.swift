import Foundation
import TestSupport
import Testing

@testable import FakeParse

/// The dashboard is compiled into the binary from its files: the two never differ (ci/embed-dashboard
/// writes the one from the other).
struct DashboardFilesTests {
    @Test(arguments: ["index.html", "dashboard.js", "dashboard.css", "icon.svg"])
    func theCompiledInFileIsTheFileAsWritten(_ name: String) throws {
        let url = PackagePaths.root.appendingPathComponent("Sources/FakeParse/Dashboard/\(name)")
        let written = try String(contentsOf: url, encoding: .utf8)
        let compiled = try #require(DashboardFiles.files[name], "\(name) is not compiled in")
        #expect(compiled.body == written, "\(name) changed: run ci/embed-dashboard")
    }
}
