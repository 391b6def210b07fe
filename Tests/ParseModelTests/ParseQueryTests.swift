import DeviceProtocol
import ParseModel
import Testing

/// `where` clauses as Parse Server's MongoDB adapter reads them (parse.md §1.7, parse-details.md §3).
@Suite struct ParseQueryTests {
    let installation: [String: JSONValue] = [
        "objectId": "o1", "deviceType": "ios", "channels": ["", "news"], "badge": 3, "appName": "NASA TV",
        "timeZone": .null, "createdAt": "2026-11-24T10:00:00.000Z", "meta": ["build": 12],
    ]

    func matches(_ json: String) throws -> Bool {
        try ParseQuery(whereJSON: try ParseJSON.decode(Array(json.utf8))).matches(installation)
    }

    func refusal(_ json: String) -> ParseFailure? {
        do {
            _ = try ParseQuery(whereJSON: try ParseJSON.decode(Array(json.utf8)))
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        (#"{}"#, true),
        (#"{"deviceType":"ios"}"#, true), (#"{"deviceType":"android"}"#, false),
        (#"{"channels":"news"}"#, true), (#"{"channels":"sports"}"#, false),
        (#"{"channels":["","news"]}"#, true), (#"{"channels":["news"]}"#, false),
        (#"{"badge":3}"#, true), (#"{"badge":3.0}"#, true), (#"{"badge":"3"}"#, false),
        (#"{"deviceToken":null}"#, true), (#"{"timeZone":null}"#, true),
        (#"{"meta.build":12}"#, true), (#"{"meta.build":13}"#, false),
    ])
    func equalityAndArrayMembership(_ clause: String, _ expected: Bool) throws {
        #expect(try matches(clause) == expected)
    }

    @Test(arguments: [
        (#"{"badge":{"$lt":4}}"#, true), (#"{"badge":{"$lt":3}}"#, false), (#"{"badge":{"$lte":3}}"#, true),
        (#"{"badge":{"$gt":2,"$lt":4}}"#, true), (#"{"badge":{"$gte":4}}"#, false),
        (#"{"badge":{"$gt":"2"}}"#, false), (#"{"appName":{"$gt":"NASA"}}"#, true),
        (#"{"createdAt":{"$gt":{"__type":"Date","iso":"2026-11-24T09:00:00.000Z"}}}"#, true),
        (#"{"createdAt":{"$lt":{"__type":"Date","iso":"2026-11-24T09:00:00.000Z"}}}"#, false),
        (#"{"deviceType":{"$ne":"android"}}"#, true), (#"{"channels":{"$ne":"news"}}"#, false),
        (#"{"deviceType":{"$eq":"ios"}}"#, true),
        (#"{"channels":{"$in":["sports","news"]}}"#, true), (#"{"channels":{"$in":["sports"]}}"#, false),
        (#"{"deviceType":{"$nin":["android","winrt"]}}"#, true), (#"{"channels":{"$nin":["news"]}}"#, false),
        (#"{"channels":{"$all":["","news"]}}"#, true), (#"{"channels":{"$all":["news","sports"]}}"#, false),
        (#"{"channels":{"$containedBy":["","news","sports"]}}"#, true),
        (#"{"channels":{"$containedBy":["news"]}}"#, false),
        (#"{"deviceToken":{"$exists":false}}"#, true), (#"{"deviceType":{"$exists":true}}"#, true),
        (#"{"timeZone":{"$exists":true}}"#, true), (#"{"deviceType":{"$exists":0}}"#, false),
        (#"{"appName":{"$regex":"^NASA"}}"#, true), (#"{"appName":{"$regex":"^nasa"}}"#, false),
        (#"{"appName":{"$regex":"^nasa","$options":"i"}}"#, true), (#"{"channels":{"$regex":"^ne"}}"#, true),
        (#"{"$or":[{"deviceType":"android"},{"badge":3}]}"#, true),
        (#"{"$or":[{"deviceType":"android"},{"badge":4}]}"#, false),
        (#"{"$and":[{"deviceType":"ios"},{"badge":3}]}"#, true), (#"{"$nor":[{"deviceType":"ios"}]}"#, false),
        (#"{"deviceType":"ios","$or":[{"channels":"news"}]}"#, true),
    ])
    func operators(_ clause: String, _ expected: Bool) throws {
        #expect(try matches(clause) == expected)
    }

    @Test(arguments: [
        (#"{"badge":{"$foo":1}}"#, 107, "bad constraint: $foo"),
        (#"{"channels":{"$in":"news"}}"#, 107, "bad $in value"),
        (#"{"channels":{"$nin":{}}}"#, 107, "bad $nin value"),
        (#"{"channels":{"$all":1}}"#, 107, "bad $all value"),
        (#"{"channels":{"$containedBy":1}}"#, 107, "bad $containedBy: should be an array"),
        (#"{"appName":{"$regex":5}}"#, 107, "bad regex: 5"),
        (#"{"appName":{"$regex":"a","$options":"q"}}"#, 102, "Bad $options value for query: q"),
        (#"{"appName":{"$regex":"("}}"#, 102, "Invalid regular expression: ("),
        (#"{"$or":{"a":1}}"#, 102, "Bad $or format - use an array value."),
        (#"{"$and":5}"#, 102, "Bad $and format - use an array value."),
        (#"{"$nor":[]}"#, 102, "Bad $nor format - use an array of at least 1 value."),
        (#"{"ACL":{}}"#, 102, "Cannot query on ACL."),
        (#"{"a b":1}"#, 105, "Invalid key name: a b"),
        (#"{"$where":"sleep(1)"}"#, 105, "Invalid key name: $where"),
        (#"{"meta":{"build":12}}"#, 107, "You cannot use [object Object] as a query parameter."),
    ])
    func malformedClausesAreRefusedWithParsesCodeAndText(_ clause: String, _ code: Int, _ message: String) {
        #expect(refusal(clause) == ParseFailure(code: code, message))
    }

    @Test func aWhereThatIsNotAnObjectIsRefused() {
        #expect(refusal("[1,2]")?.code == 107)
        #expect(refusal("5")?.code == 107)
    }

    @Test func nestingIsBounded() {
        let deep = String(repeating: #"{"$or":["#, count: 40) + "{}" + String(repeating: "]}", count: 40)
        #expect(refusal(deep)?.code == 102)
    }

    @Test func addingAConditionKeepsTheClause() throws {
        let query = try ParseQuery(where: ["deviceType": "ios"]).adding("deviceToken", ["$exists": true])
        #expect(try !query.matches(installation))
        #expect(try query.matches(installation.merging(["deviceToken": "t"]) { $1 }))
        let both = try ParseQuery(where: ["badge": ["$gt": 1]]).adding("badge", ["$lt": 3])
        #expect(try !both.matches(installation))
    }
}
