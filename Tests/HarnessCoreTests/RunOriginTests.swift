import Foundation
import Testing

@testable import HarnessCore

/// The copy of harness.yml a cassette keeps: a row per rule.
@Suite struct RunOriginTests {
    static let file = """
        version: 1
        services:
          parse: {masterKey: sekrit-master, clientKey: "sekrit-client"}
        apps:
          chat: {bundleId: com.example.chat, command: [chat]}
        scenarios:
          one:
            steps:
              - launch: chat
        """

    @Test func theKeysTheFileWritesAreStandInsAndTheCopyStillReads() throws {
        let configuration = try ConfigurationLoader.parse(Self.file, file: "harness.yml")
        let copy = try #require(RunOrigin.keptCopy(of: Data(Self.file.utf8), services: configuration.services))
        let text = String(decoding: copy, as: UTF8.self)
        #expect(!text.contains("sekrit"), "\(text)")
        let reread = try ConfigurationLoader.parse(text, file: "harness.yml")
        #expect(reread.services.parse.masterKey == "redacted-parse-master-key")
        #expect(reread.services.parse.clientKey == "redacted-parse-client-key")
        // A key the file leaves to its default is not in it, and stays the default.
        #expect(reread.services.parse.restAPIKey == configuration.services.parse.restAPIKey)
        #expect(reread.scenarios.map(\.name) == ["one"])
    }
}
