import DeviceProtocol
import ParseModel
import Testing

/// A write's fields and Parse's field operations (parse.md §1.6, parse-details.md §4–6).
@Suite struct ObjectChangesTests {
    let stored: [String: JSONValue] = ["badge": 1, "channels": ["a"], "deviceType": "ios", "appName": "x"]

    func changes(_ json: String) throws -> ObjectChanges {
        guard case .object(let body) = try ParseJSON.decode(Array(json.utf8)) else { throw ParseFailure(code: 107, "") }
        return try ObjectChanges(body: body)
    }

    func refusal(_ json: String, columns: [String: String] = InstallationSchema.columns) -> ParseFailure? {
        do {
            try changes(json).check(className: "_Installation", columns: columns)
            return nil
        } catch let failure as ParseFailure {
            return failure
        } catch {
            return nil
        }
    }

    @Test func operationsApplyAndTheirResultsAreEchoedButNotPlainSetsOrDeletes() throws {
        let body = #"""
            {"badge":{"__op":"Increment","amount":2},"channels":{"__op":"Add","objects":["b","a"]},
             "tags":{"__op":"AddUnique","objects":["x","x","y"]},"appName":{"__op":"Delete"},"timeZone":"UTC"}
            """#
        let (object, results) = try changes(body).applied(to: stored)
        #expect(object["badge"] == 3)
        #expect(object["channels"] == ["a", "b", "a"])
        #expect(object["tags"] == ["x", "y"])
        #expect(object["appName"] == nil)
        #expect(object["timeZone"] == "UTC")
        #expect(results == ["badge": 3, "channels": ["a", "b", "a"], "tags": ["x", "y"]])
    }

    @Test func removeTakesEveryCopyAndIncrementStartsFromZero() throws {
        let (object, _) = try changes(
            #"{"channels":{"__op":"Remove","objects":["a"]},"count":{"__op":"Increment","amount":-1}}"#
        ).applied(to: ["channels": ["a", "b", "a"]])
        #expect(object["channels"] == ["b"])
        #expect(object["count"] == -1)
    }

    @Test func nullIsStoredAsNull() throws {
        #expect(try changes(#"{"badge":null}"#).applied(to: stored).object["badge"] == .null)
    }

    @Test func theServersFieldsAreDroppedAndDatesOfAnotherTypeRefused() throws {
        let dropped = try changes(
            #"{"objectId":"x","createdAt":{"__type":"Date","iso":"2020-01-01T00:00:00.000Z"},"badge":2}"#)
        #expect(Array(dropped.changes.keys) == ["badge"])
        #expect(
            refusal(#"{"updatedAt":"2020-01-01"}"#)
                == ParseFailure(code: 111, "schema mismatch for _Installation.updatedAt; expected Date but got String"))
    }

    @Test(arguments: [
        (#"{"badge":"3"}"#, 111, "schema mismatch for _Installation.badge; expected Number but got String"),
        (#"{"badge":true}"#, 111, "schema mismatch for _Installation.badge; expected Number but got Boolean"),
        (#"{"channels":"news"}"#, 111, "schema mismatch for _Installation.channels; expected Array but got String"),
        (
            #"{"deviceType":{"__op":"Increment","amount":1}}"#, 111,
            "schema mismatch for _Installation.deviceType; expected String but got Number"
        ),
        (
            #"{"badge":{"__op":"Add","objects":[1]}}"#, 111,
            "schema mismatch for _Installation.badge; expected Number but got Array"
        ),
        (#"{"badge":{"__op":"Increment","amount":"1"}}"#, 107, "incrementing must provide a number"),
        (#"{"badge":{"__op":"Increment","amount":1e300}}"#, 107, "incrementing must provide a number"),
        (#"{"channels":{"__op":"Add","objects":"a"}}"#, 107, "objects to add must be an array"),
        (#"{"channels":{"__op":"AddUnique"}}"#, 107, "objects to add must be an array"),
        (#"{"channels":{"__op":"Remove","objects":{}}}"#, 107, "objects to remove must be an array"),
        (#"{"badge":{"__op":"Multiply","amount":2}}"#, 108, "The Multiply operator is not supported yet."),
        (#"{"_private":1}"#, 105, "Invalid field name: _private."),
        (#"{"a-b":1}"#, 105, "Invalid field name: a-b."),
        (#"{"meta":{"a.b":1}}"#, 121, "Nested keys should not contain the '$' or '.' characters"),
        (#"{"meta":[{"$set":1}]}"#, 121, "Nested keys should not contain the '$' or '.' characters"),
        (#"{"meta":{"constructor":1}}"#, 105, #"Prohibited keyword in request data: {"key":"constructor"}."#),
        (#"{"__proto__":{}}"#, 105, #"Prohibited keyword in request data: {"key":"__proto__"}."#),
    ])
    func badFieldsAreRefusedWithParsesCodeAndText(_ body: String, _ code: Int, _ message: String) {
        #expect(refusal(body) == ParseFailure(code: code, message))
    }

    @Test func aCustomFieldKeepsTheTypeItWasFirstWrittenWith() throws {
        let first = try changes(#"{"score":1}"#)
        let columns = InstallationSchema.columns.merging(first.newColumns(beside: InstallationSchema.columns)) { $1 }
        #expect(columns["score"] == "Number")
        #expect(
            refusal(#"{"score":"high"}"#, columns: columns)
                == ParseFailure(code: 111, "schema mismatch for _Installation.score; expected Number but got String"))
        #expect(refusal(#"{"score":null}"#, columns: columns) == nil)
        #expect(refusal(#"{"ACL":{"*":{"read":true}}}"#, columns: columns) == nil)
    }
}
