import FakeParse
import Foundation
import TestSupport
import Testing

/// Parse Server's installation REST surface over real HTTP, with curl as the client: the dedupe rules as
/// a client sees them, the JS SDK's POST-as-GET, objects by id, field operations, `/batch`, and bad input
/// that must get Parse's answer, never a 500.
@Suite struct ParseRESTTests: ParseServing {
    let token = String(repeating: "ab", count: 32)

    func results(_ answer: (status: Int, json: [String: Any], headers: String, body: String)) -> [[String: Any]] {
        answer.json["results"] as? [[String: Any]] ?? []
    }

    @Test func aCreateWhoseTokenIsKnownBecomesAnUpdateAndAnotherInstallationTakesTheTokenOnItsApp() async throws {
        let services = try await start()
        let tokenOnly = try await curl(
            services, "POST", "/installations", master: true,
            body: #"{"deviceType":"ios","deviceToken":"\#(token.uppercased())","appIdentifier":"com.x"}"#)
        let merged = try await curl(
            services, "POST", "/installations",
            body: #"{"deviceType":"ios","deviceToken":"\#(token)","installationId":"i-1","appIdentifier":"com.x"}"#)
        let afterMerge = try await curl(services, "GET", "/installations", master: true)
        let taker = try await curl(
            services, "POST", "/installations",
            body: #"{"deviceType":"ios","deviceToken":"\#(token)","installationId":"i-2","appIdentifier":"com.x"}"#)
        let afterTaking = try await curl(services, "GET", "/installations", master: true)
        await services.close()

        #expect(tokenOnly.status == 201)
        #expect(merged.status == 200, "a POST that matched a row is an update")
        #expect(Set(merged.json.keys) == ["updatedAt"])
        #expect(results(afterMerge).count == 1)
        #expect(results(afterMerge).first?["installationId"] as? String == "i-1")
        #expect(results(afterMerge).first?["deviceToken"] as? String == token)
        #expect(taker.status == 201)
        #expect(results(afterTaking).map { $0["installationId"] as? String } == ["i-2"])
    }

    @Test func theRowWithTheTokenAndNoInstallationIdWinsAndTheInstallationIdsRowGoes() async throws {
        let services = try await start()
        let idRow = try await curl(
            services, "POST", "/installations", body: #"{"deviceType":"ios","installationId":"i1"}"#)
        let tokenRow = try await curl(
            services, "POST", "/installations", master: true, body: #"{"deviceType":"ios","deviceToken":"\#(token)"}"#)
        let joined = try await curl(
            services, "POST", "/installations", body: #"{"installationId":"i1","deviceToken":"\#(token)","badge":7}"#)
        let list = try await curl(services, "GET", "/installations", master: true)
        await services.close()
        #expect(idRow.status == 201)
        #expect(joined.status == 200, "\(joined.body)")
        let rows = results(list)
        #expect(rows.count == 1, "\(list.body)")
        #expect(rows.first?["objectId"] as? String == tokenRow.json["objectId"] as? String)
        #expect(rows.first?["installationId"] as? String == "i1")
        #expect(rows.first?["badge"] as? Int == 7)
    }

    @Test func theInstallationIdHeaderNamesTheRowItUpdatesButIsNeverStored() async throws {
        let services = try await start()
        let created = try await curl(
            services, "POST", "/classes/_Installation", body: #"{"deviceType":"ios","installationId":"A-1"}"#)
        let again = try await curl(
            services, "POST", "/classes/_Installation", body: #"{"badge":5}"#, headers: ["X-Parse-Installation-Id: a-1"]
        )
        let headerOnly = try await curl(
            services, "POST", "/classes/_Installation", body: #"{"deviceType":"ios"}"#,
            headers: ["X-Parse-Installation-Id: b-2"])
        let list = try await curl(services, "GET", "/installations", master: true)
        await services.close()
        #expect(created.status == 201)
        #expect(again.status == 200, "\(again.body)")
        #expect(headerOnly.status == 201)
        #expect(results(list).count == 2)
        #expect(results(list).first?["installationId"] as? String == "a-1")
        #expect(results(list).first?["badge"] as? Int == 5)
        #expect(results(list).last?["installationId"] == nil, "the header is matched by, not stored")
    }

    @Test func objectsByIdAndTheirOperations() async throws {
        let services = try await start()
        let created = try await curl(
            services, "POST", "/installations",
            body:
                #"{"deviceType":"ios","installationId":"i-1","channels":["a"],"badge":{"__op":"Increment","amount":2}}"#
        )
        let id = try #require(created.json["objectId"] as? String)
        let location = created.headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix("location:") }
        let updated = try await curl(
            services, "PUT", "/installations/\(id)",
            body:
                #"{"badge":{"__op":"Increment","amount":1},"channels":{"__op":"AddUnique","objects":["a","b"]},"timeZone":"UTC"}"#
        )
        let fetched = try await curl(services, "GET", "/classes/_Installation/\(id)?keys=badge")
        let deleteWithoutMaster = try await curl(services, "DELETE", "/installations/\(id)")
        let deleted = try await curl(services, "DELETE", "/installations/\(id)", master: true)
        let gone = try await curl(services, "GET", "/installations/\(id)")
        let deletedAgain = try await curl(services, "DELETE", "/installations/\(id)", master: true)
        await services.close()

        #expect(created.status == 201)
        #expect(created.json["badge"] as? Int == 2, "a create echoes its operations' results")
        #expect(
            location?.dropFirst("location:".count).trimmingCharacters(in: .whitespaces)
                == services.parse.url + "/classes/_Installation/\(id)", "\(created.headers)")
        #expect(updated.status == 200)
        #expect(Set(updated.json.keys) == ["badge", "channels", "updatedAt"])
        #expect(updated.json["badge"] as? Int == 3)
        #expect(updated.json["channels"] as? [String] == ["a", "b"])
        #expect(fetched.status == 200, "a get needs no master key")
        #expect(Set(fetched.json.keys) == ["objectId", "createdAt", "updatedAt", "badge"])
        #expect(deleteWithoutMaster.status == 400)
        #expect(
            deleteWithoutMaster.json["error"] as? String
                == "Clients aren't allowed to perform the delete operation on the installation collection.")
        #expect(deleted.status == 200)
        #expect(deleted.body == "{}")
        #expect(gone.status == 404)
        #expect(gone.body == #"{"code":101,"error":"Object not found."}"#)
        #expect(deletedAgain.status == 404)
    }

    /// The JS SDK (and so Parse Dashboard) sends every call as a POST with its method and keys in a
    /// text/plain body.
    @Test func aPostCarryingMethodAndKeysIsAFindWithACount() async throws {
        let services = try await start()
        for index in 0..<3 {
            _ = try await curl(
                services, "POST", "/installations",
                body: #"{"deviceType":"\#(index == 0 ? "android" : "ios")","installationId":"i-\#(index)"}"#)
        }
        let body =
            #"{"_method":"GET","_ApplicationId":"app","_MasterKey":"master","_ClientVersion":"js5.3.0","where":{"deviceType":"ios"},"count":1,"limit":0}"#
        let counted = try await curl(
            services, "POST", "/classes/_Installation", body: body, headers: ["Content-Type: text/plain"],
            applicationId: nil)
        let ordered = try await curl(
            services, "GET", "/installations?order=-installationId&limit=2&where=%7B%22deviceType%22%3A%22ios%22%7D",
            master: true)
        await services.close()
        #expect(counted.status == 200)
        #expect(counted.body == #"{"count":2,"results":[]}"#)
        #expect(results(ordered).map { $0["installationId"] as? String } == ["i-2", "i-1"])
    }

    @Test func aBatchAnswersEachRequestAndFailsWholeWhenAPathCannotBeRouted() async throws {
        let services = try await start()
        let batch = try await curl(
            services, "POST", "/batch",
            body: #"""
                {"requests":[
                  {"method":"POST","path":"/parse/classes/_Installation","body":{"deviceType":"ios","installationId":"b-1"}},
                  {"method":"POST","path":"/parse/installations","body":{"deviceType":"ios"}},
                  {"method":"GET","path":"/parse/installations/nope"}]}
                """#)
        let unroutable = try await curl(
            services, "POST", "/batch",
            body: #"{"requests":[{"method":"POST","path":"/classes/_Installation","body":{"installationId":"x"}}]}"#)
        let list = try await curl(services, "GET", "/installations", master: true)
        await services.close()
        #expect(batch.status == 200)
        let answers = try #require(try JSONSerialization.jsonObject(with: Data(batch.body.utf8)) as? [[String: Any]])
        #expect(answers.count == 3)
        #expect((answers[0]["success"] as? [String: Any])?["objectId"] != nil)
        let second = answers[1]["error"] as? [String: Any]
        #expect(second?["code"] as? Int == 135)
        #expect(
            second?["error"] as? String
                == "at least one ID field (deviceToken, installationId) must be specified in this operation")
        let third = answers[2]["error"] as? [String: Any]
        #expect(third?["code"] as? Int == 101)
        #expect(third?["error"] as? String == "Object not found.")
        #expect(unroutable.status == 400)
        #expect(unroutable.body == #"{"code":107,"error":"cannot route batch path /classes/_Installation"}"#)
        #expect(results(list).count == 1)
    }

    @Test func keysAreCheckedBeforeAnythingElse() async throws {
        let services = try await start()
        let noApp = try await curl(services, "GET", "/installations/x", applicationId: nil)
        let wrongApp = try await curl(services, "POST", "/installations", body: "{}", applicationId: "other")
        let health = try await curl(services, "GET", "/health", applicationId: nil)
        let serverInfo = try await curl(services, "GET", "/serverInfo", master: true)
        await services.close()
        #expect(noApp.status == 403)
        #expect(noApp.body == #"{"error":"unauthorized"}"#)
        #expect(wrongApp.status == 403)
        #expect(health.body == #"{"status":"ok"}"#)
        #expect((serverInfo.json["features"] as? [String: Any])?["push"] != nil)
    }

    /// Whatever a client sends, it gets Parse's answer and the server keeps serving; no 500.
    @Test(
        arguments: [
            (#"{"deviceType":"ios","installationId":"#, 400, nil, "Invalid JSON"),
            (#"[1,2]"#, 400, 107, "the body must be a JSON object, not Array"),
            (#"{"deviceType":"ios","installationId":5}"#, 400, 111, "expected String but got Number"),
            (#"{"deviceType":"ios","deviceToken":{"$ne":null}}"#, 400, 111, "expected String but got Object"),
            (
                #"{"objectId":"mine","deviceType":"ios","installationId":"i"}"#, 400, 105,
                "objectId is an invalid field name."
            ),
            (#"{"deviceType":"ios","installationId":"i","badge":"x"}"#, 400, 111, "expected Number but got String"),
            (#"{"deviceType":"ios","installationId":"i","$set":1}"#, 400, 105, "Invalid field name: $set."),
        ] as [(String, Int, Int?, String)])
    func aBadWriteGetsParsesAnswer(_ body: String, _ status: Int, _ code: Int?, _ text: String) async throws {
        let services = try await start()
        let answer = try await curl(services, "POST", "/installations", body: body)
        let health = try await curl(services, "GET", "/health")
        await services.close()
        #expect(answer.status == status, "\(answer.body)")
        #expect(answer.json["code"] as? Int == code, "\(answer.body)")
        #expect((answer.json["error"] as? String)?.contains(text) == true, "\(answer.body)")
        #expect(health.status == 200)
    }

    @Test(arguments: [
        ("where=%7B%22badge%22%3A%7B%22%24foo%22%3A1%7D%7D", 107, "bad constraint: $foo"),
        ("where=%7B%22badge%22%3A%7B%22%24in%22%3A1%7D%7D", 107, "bad $in value"),
        ("where=%7B%22badge%22%3A%7B%22%24regex%22%3A1%7D%7D", 107, "bad regex: 1"),
        ("where=%7Bbad", 107, "Invalid where clause: it must be a JSON object, not \"{bad\""),
        ("limit=-5", 102, "limit must be a whole number from 0 to 1000000000, not -5"),
        ("nonsense=1", 102, "Invalid parameter for query: nonsense"),
    ])
    func aBadFindGetsParsesAnswer(_ query: String, _ code: Int, _ text: String) async throws {
        let services = try await start()
        let answer = try await curl(services, "GET", "/installations?\(query)", master: true)
        await services.close()
        #expect(answer.status == 400)
        #expect(answer.json["code"] as? Int == code, "\(answer.body)")
        #expect(answer.json["error"] as? String == text)
    }
}
