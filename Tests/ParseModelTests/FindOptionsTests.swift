import DeviceProtocol
import ParseModel
import Testing

/// A find's parameters and the find itself (parse.md §1.6–1.7, parse-details.md §3).
@Suite struct FindOptionsTests {
    let rows: [[String: JSONValue]] = (0..<150).map { index in
        [
            "objectId": .string("o\(index)"), "badge": .number(Double(index % 7)),
            "deviceType": index.isMultiple(of: 3) ? "android" : "ios", "appName": .string("app \(index % 2)"),
            "createdAt": "2026-11-24T10:00:00.000Z", "updatedAt": "2026-11-24T10:00:00.000Z",
        ]
    }

    func options(_ parameters: [String: String]) throws -> FindOptions {
        try FindOptions(
            parameters: parameters.mapValues { text in (try? ParseJSON.decode(Array(text.utf8))) ?? .string(text) })
    }

    @Test func aFindReturnsAHundredUnlessToldOtherwise() throws {
        #expect(try options([:]).run(over: rows).results.count == 100)
        #expect(try options(["limit": "120"]).run(over: rows).results.count == 120)
        #expect(
            try options(["limit": "10", "skip": "145"]).run(over: rows).results.map { $0["objectId"] } == [
                "o145", "o146", "o147", "o148", "o149",
            ])
    }

    @Test func countIgnoresSkipAndLimitAndLimitZeroReturnsOnlyTheCount() throws {
        let counted = try options(["where": #"{"deviceType":"android"}"#, "count": "1", "limit": "0"]).run(over: rows)
        #expect(counted.results.isEmpty)
        #expect(counted.count == 50)
        let both = try options(["count": "true", "limit": "2", "skip": "3"]).run(over: rows)
        #expect(both.results.count == 2)
        #expect(both.count == 150)
        #expect(try options(["count": "0"]).run(over: rows).count == nil)
        #expect(try options(["count": ""]).run(over: rows).count == nil)
    }

    @Test func orderSortsByEachKeyInTurnAndKeepsTheStoresOrderAmongEquals() throws {
        let sorted = try options(["order": "-badge,appName", "limit": "5"]).run(over: rows).results
        #expect(sorted.map { $0["objectId"] } == ["o6", "o20", "o34", "o48", "o62"])
        let ascending = try options(["order": "badge", "limit": "3"]).run(over: rows).results
        #expect(ascending.map { $0["objectId"] } == ["o0", "o7", "o14"])
    }

    @Test func keysAndExcludeKeysProjectButAlwaysKeepTheIdAndDates() throws {
        let picked = try options(["keys": "badge", "limit": "1"]).run(over: rows).results[0]
        #expect(Set(picked.keys) == ["objectId", "createdAt", "updatedAt", "badge"])
        let excluded = try options(["excludeKeys": "badge,objectId", "limit": "1"]).run(over: rows).results[0]
        #expect(Set(excluded.keys) == ["objectId", "createdAt", "updatedAt", "deviceType", "appName"])
    }

    @Test(arguments: [
        (["bogus": "1"], 102, "Invalid parameter for query: bogus"),
        (["limit": "-1"], 102, "limit must be a whole number from 0 to 1000000000, not -1"),
        (["skip": "ten"], 102, #"skip must be a whole number from 0 to 1000000000, not "ten""#),
        (["limit": "1e12"], 102, "limit must be a whole number from 0 to 1000000000, not 1000000000000"),
        (["order": "badge,$x"], 105, "Invalid field name: $x."),
        (["where": #"{"badge":{"$bad":1}}"#], 107, "bad constraint: $bad"),
        (["where": #""text""#], 107, #"Invalid where clause: it must be a JSON object, not "text""#),
    ])
    func badParametersAreRefused(_ parameters: [String: String], _ code: Int, _ message: String) {
        #expect(throws: ParseFailure(code: code, message)) { try options(parameters) }
    }

    @Test func aGetTakesOnlyKeysAndIncludes() throws {
        let get = try FindOptions.forGet(parameters: ["keys": "badge", "include": "user"])
        #expect(Set(get.project(rows[0]).keys) == ["objectId", "createdAt", "updatedAt", "badge"])
        #expect(throws: ParseFailure(code: 102, "Improper encode of parameter")) {
            try FindOptions.forGet(parameters: ["where": [:]])
        }
    }
}
