import DeviceProtocol
import ParseModel
import Testing

/// Parse Server's `_Installation` write rules (`RestWrite.handleInstallation`, parse.md §1.5), one test
/// per rule, with the exact code and text of each refusal.
@Suite struct InstallationWriteTests {
    typealias Object = [String: JSONValue]
    let token = String(repeating: "ab", count: 32)
    let otherToken = String(repeating: "cd", count: 32)

    func write(
        _ data: Object, objectId: String? = nil, header: String? = nil, master: Bool = false
    ) throws(ParseFailure) -> InstallationWrite {
        try InstallationWrite(objectId: objectId, data: data, headerInstallationId: header, isMaster: master)
    }

    /// Resolves a write against stored rows the way the store does: the rows its lookup matches.
    func resolve(_ write: InstallationWrite, stored: [Object]) throws(ParseFailure) -> InstallationWrite.Resolution {
        let found = try write.lookup.map { query throws(ParseFailure) in try query.filter(stored) } ?? []
        return try write.resolve(found: found)
    }

    func failure(_ body: () throws -> Void) -> ParseFailure? {
        do {
            try body()
            return nil
        } catch {
            return error as? ParseFailure
        }
    }

    // MARK: Ids and normalisation

    @Test func aCreateWithNoIdFieldAtAllIs135() {
        let refused = failure { _ = try write(["deviceType": "ios", "badge": 1]) }
        #expect(
            refused
                == ParseFailure(
                    code: 135, "at least one ID field (deviceToken, installationId) must be specified in this operation"
                ))
        #expect(refused?.status == 400)
    }

    @Test func theInstallationIdHeaderIsAnIdForACreate() throws {
        let write = try write(["deviceType": "ios"], header: "ABC-1")
        #expect(write.installationId == "abc-1")
        #expect(write.data["installationId"] == nil, "the header is matched by, never stored")
    }

    @Test func theMasterKeyIgnoresTheInstallationIdHeader() throws {
        let write = try write(["deviceType": "ios", "deviceToken": .string(token)], header: "abc-1", master: true)
        #expect(write.installationId == nil)
    }

    @Test func aSixtyFourCharacterTokenIsLowerCasedAndOthersAreKept() throws {
        let upper = try write(["deviceType": "ios", "deviceToken": .string(token.uppercased())])
        #expect(upper.deviceToken == token)
        let android = try write(["deviceType": "android", "deviceToken": "FCM-Token:ABC"])
        #expect(android.deviceToken == "FCM-Token:ABC")
    }

    @Test func theInstallationIdIsLowerCased() throws {
        let write = try write(["deviceType": "ios", "installationId": "4F1F-A"])
        #expect(write.data["installationId"] == "4f1f-a")
        #expect(write.installationId == "4f1f-a")
    }

    /// Non-strings in the id fields are refused before they reach a query (GHSA-cc6h-c8m4-hgrx: a token
    /// of `{"$ne": null}` would otherwise make the clean-up delete every installation).
    @Test(arguments: [
        ("deviceToken", #"{"$ne":null}"#, "Object"), ("installationId", "5", "Number"),
        ("appIdentifier", "[]", "Array"), ("deviceType", "true", "Boolean"),
    ])
    func idFieldsMustBeStrings(field: String, json: String, type: String) throws {
        let value = try ParseJSON.decode(Array(json.utf8))
        let body: Object = ["deviceType": "ios", "installationId": "i"].merging([field: value]) { $1 }
        let refused = failure { _ = try write(body) }
        #expect(
            refused
                == ParseFailure(
                    code: 111, "schema mismatch for _Installation.\(field); expected String but got \(type)"))
    }

    // MARK: Updates

    @Test func anUpdateThatTouchesNoIdFieldIsAPlainUpdate() throws {
        let write = try write(["badge": 3], objectId: "obj1", master: true)
        #expect(write.lookup == nil)
        #expect(try write.resolve(found: []) == .init(updating: "obj1", deletions: []))
    }

    @Test func anUpdateOfARowThatIsNotThereIs101() throws {
        let refused = failure { _ = try resolve(try write(["deviceType": "ios"], objectId: "gone"), stored: []) }
        #expect(refused == ParseFailure(code: 101, "Object not found for update."))
        #expect(refused?.status == 404)
    }

    @Test func anUpdateMayNotChangeTheInstallationId() {
        let stored: [Object] = [["objectId": "o1", "installationId": "a", "deviceType": "ios"]]
        let refused = failure { _ = try resolve(try write(["installationId": "b"], objectId: "o1"), stored: stored) }
        #expect(refused == ParseFailure(code: 136, "installationId may not be changed in this operation"))
    }

    @Test func anUpdateMayNotChangeTheTokenWhenNeitherSideHasAnInstallationId() throws {
        let stored: [Object] = [["objectId": "o1", "deviceToken": .string(token), "deviceType": "ios"]]
        let refused = failure {
            _ = try resolve(
                try write(["deviceToken": .string(otherToken)], objectId: "o1", master: true), stored: stored)
        }
        #expect(refused == ParseFailure(code: 136, "deviceToken may not be changed in this operation"))
        let withId: [Object] = [stored[0].merging(["installationId": "i"]) { $1 }]
        let allowed = try resolve(
            try write(["deviceToken": .string(otherToken)], objectId: "o1", master: true), stored: withId)
        #expect(allowed.updating == "o1")
    }

    @Test func anUpdateMayNotChangeTheDeviceType() {
        let stored: [Object] = [["objectId": "o1", "installationId": "a", "deviceType": "ios"]]
        let refused = failure { _ = try resolve(try write(["deviceType": "android"], objectId: "o1"), stored: stored) }
        #expect(refused == ParseFailure(code: 136, "deviceType may not be changed in this operation"))
    }

    // MARK: Creates

    @Test func aNewInstallationNeedsADeviceType() {
        let refused = failure { _ = try resolve(try write(["installationId": "new"]), stored: []) }
        #expect(refused == ParseFailure(code: 135, "deviceType must be specified in this operation"))
    }

    @Test func aCreateMatchingNothingCreates() throws {
        let resolution = try resolve(try write(["deviceType": "ios", "installationId": "i1"]), stored: [])
        #expect(resolution == .init(updating: nil, deletions: []))
    }

    @Test func aCreateWithAKnownInstallationIdMergesIntoItWithoutADeviceType() throws {
        let stored: [Object] = [["objectId": "o1", "installationId": "i1", "deviceType": "ios"]]
        let resolution = try resolve(try write(["installationId": "I1", "badge": 2]), stored: stored)
        #expect(resolution == .init(updating: "o1", deletions: []))
    }

    @Test func aCreateWithTheHeaderIdMergesIntoTheInstallationItNames() throws {
        let stored: [Object] = [["objectId": "o1", "installationId": "i1", "deviceType": "ios"]]
        let resolution = try resolve(try write(["badge": 2], header: "I1"), stored: stored)
        #expect(resolution == .init(updating: "o1", deletions: []))
    }

    @Test func aCreateWhoseTokenIsOnOneRowWithoutAnInstallationIdBecomesAnUpdateOfIt() throws {
        let stored: [Object] = [["objectId": "t1", "deviceToken": .string(token), "deviceType": "ios"]]
        let resolution = try resolve(
            try write(["deviceType": "ios", "deviceToken": .string(token), "installationId": "new"]), stored: stored)
        #expect(resolution == .init(updating: "t1", deletions: []))
    }

    @Test func aCreateWithoutAnInstallationIdWhoseTokenIsOnOneRowBecomesAnUpdateOfIt() throws {
        let stored: [Object] = [
            ["objectId": "t1", "deviceToken": .string(token), "installationId": "i", "deviceType": "ios"]
        ]
        let resolution = try resolve(
            try write(["deviceType": "ios", "deviceToken": .string(token)], master: true), stored: stored)
        #expect(resolution == .init(updating: "t1", deletions: []))
    }

    @Test func aTokenOnSeveralRowsNeedsAnInstallationIdIn132() {
        let stored: [Object] = [
            ["objectId": "t1", "deviceToken": .string(token), "installationId": "a", "deviceType": "ios"],
            ["objectId": "t2", "deviceToken": .string(token), "installationId": "b", "deviceType": "ios"],
        ]
        let refused = failure {
            _ = try resolve(
                try write(["deviceType": "ios", "deviceToken": .string(token)], master: true), stored: stored)
        }
        #expect(
            refused
                == ParseFailure(
                    code: 132, "Must specify installationId when deviceToken matches multiple Installation objects"))
    }

    @Test func aNewInstallationTakesTheTokenFromOthersOnTheSameApp() throws {
        let stored: [Object] = [
            ["objectId": "t1", "deviceToken": .string(token), "installationId": "old", "deviceType": "ios"]
        ]
        let resolution = try resolve(
            try write([
                "deviceType": "ios", "deviceToken": .string(token), "installationId": "new", "appIdentifier": "com.x",
            ]),
            stored: stored)
        let deletion = InstallationWrite.Deletion.sharingToken(
            token, keepingInstallationId: "new", keepingObjectId: nil, appIdentifier: "com.x")
        #expect(resolution == .init(updating: nil, deletions: [deletion]))
        let query = try ParseQuery(where: deletion.query)
        #expect(try query.matches(stored[0].merging(["appIdentifier": "com.x"]) { $1 }))
        #expect(try !query.matches(stored[0].merging(["appIdentifier": "com.other"]) { $1 }), "scoped by app")
        #expect(try !query.matches(["deviceToken": .string(token), "installationId": "new"]), "keeps the writer")
    }

    @Test func theTokenOnlyRowWinsOverTheInstallationIdsRow() throws {
        let stored: [Object] = [
            ["objectId": "id1", "installationId": "i1", "deviceType": "ios"],
            ["objectId": "t1", "deviceToken": .string(token), "deviceType": "ios"],
        ]
        let resolution = try resolve(
            try write(["deviceType": "ios", "deviceToken": .string(token), "installationId": "i1"]), stored: stored)
        #expect(resolution == .init(updating: "t1", deletions: [.object("id1")]))
    }

    @Test func aNewTokenOnAKnownInstallationTakesItFromOthers() throws {
        let stored: [Object] = [
            ["objectId": "id1", "installationId": "i1", "deviceToken": .string(otherToken), "deviceType": "ios"],
            ["objectId": "t1", "deviceToken": .string(token), "installationId": "i2", "deviceType": "ios"],
        ]
        let resolution = try resolve(
            try write(["deviceToken": .string(token), "installationId": "i1"]), stored: stored)
        #expect(
            resolution
                == .init(
                    updating: "id1",
                    deletions: [
                        .sharingToken(token, keepingInstallationId: "i1", keepingObjectId: nil, appIdentifier: nil)
                    ]
                ))
    }

    @Test func aNewTokenNamedOnlyByTheHeaderCleansNothingUp() throws {
        let stored: [Object] = [
            ["objectId": "id1", "installationId": "i1", "deviceToken": .string(otherToken), "deviceType": "ios"],
            ["objectId": "t1", "deviceToken": .string(token), "installationId": "i2", "deviceType": "ios"],
        ]
        let resolution = try resolve(try write(["deviceToken": .string(token)], header: "i1"), stored: stored)
        #expect(resolution == .init(updating: "id1", deletions: []))
    }

    @Test func theSameTokenOnAKnownInstallationIsAPlainMerge() throws {
        let stored: [Object] = [
            ["objectId": "id1", "installationId": "i1", "deviceToken": .string(token), "deviceType": "ios"]
        ]
        let resolution = try resolve(
            try write(["deviceType": "ios", "deviceToken": .string(token.uppercased()), "installationId": "I1"]),
            stored: stored)
        #expect(resolution == .init(updating: "id1", deletions: []))
    }
}
