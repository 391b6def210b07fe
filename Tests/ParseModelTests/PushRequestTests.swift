import DeviceProtocol
import ParseModel
import Testing

/// `POST /push` read as Parse Server reads it (parse.md §2.1), with its 115 texts, and `_PushStatus`
/// moved along as Parse Server moves it (§2.3).
@Suite struct PushRequestTests {
    let now = 1_800_000_000.0

    func request(_ json: String) throws -> PushRequest {
        guard case .object(let body) = try ParseJSON.decode(Array(json.utf8)) else { throw ParseFailure(code: 107, "") }
        return try PushRequest(body: body, now: now)
    }

    @Test(arguments: [
        (#"{"channels":["a"],"where":{},"data":{}}"#, "Channels and query can not be set at the same time."),
        (#"{"data":{"alert":"x"}}"#, #"Sending a push requires either "channels" or a "where" query."#),
        (#"{"channels":"a"}"#, #"channels must be an array of channel names, not "a""#),
        (
            #"{"where":{},"data":{"badge":"twice"}}"#,
            "Invalid value for badge, expected number or 'Increment' or {increment: number}"
        ),
        (
            #"{"where":{},"data":{"badge":{"__op":"Add"}}}"#,
            "Invalid value for badge, expected number or 'Increment' or {increment: number}"
        ),
        (
            #"{"where":{},"expiration_time":1,"expiration_interval":5}"#,
            "Both expiration_time and expiration_interval cannot be set"
        ),
        (#"{"where":{},"expiration_interval":0}"#, "expiration_interval must be a number greater than 0"),
        (#"{"where":{},"expiration_interval":"5"}"#, "expiration_interval must be a number greater than 0"),
        (#"{"where":{},"expiration_time":"tomorrow"}"#, "tomorrow is not valid time."),
        (#"{"where":{},"push_time":"soon"}"#, "soon is not valid time."),
        (
            #"{"where":{},"push_time":"2027-01-01T10:00:00"}"#,
            "push_time 2027-01-01T10:00:00 has no time zone: FakeParse does not send at each installation's local time; add Z or an offset"
        ),
        (#"{"where":{},"push_time":4000000000}"#, "push_time must be within a year from now, not 4000000000"),
        (#"{"where":{},"data":[1]}"#, "data must be an object, not [1]"),
    ])
    func badPushesGetParsesTexts(_ body: String, _ message: String) {
        #expect(throws: ParseFailure(code: 115, message)) { try request(body) }
    }

    @Test func channelsBecomeAnInQueryAndRecipientsNeedAToken() throws {
        let push = try request(#"{"channels":["news"],"data":{"alert":"hi"}}"#)
        #expect(push.query.source == ["channels": ["$in": ["news"]]])
        #expect(try push.recipients.matches(["channels": ["news"], "deviceToken": "t"]))
        #expect(try !push.recipients.matches(["channels": ["news"]]))
        #expect(try !push.recipients.matches(["channels": ["news"], "deviceToken": .null]))
        #expect(try !push.recipients.matches(["channels": ["news"], "deviceToken": ""]))
    }

    @Test(arguments: [
        (#""Increment""#, PushRequest.BadgeChange.increment(1)), (#""increment""#, .increment(1)),
        (#"{"__op":"Increment","amount":3}"#, .increment(3)), ("5", .set(5)),
    ])
    func badgeChanges(_ badge: String, _ change: PushRequest.BadgeChange) throws {
        #expect(try request(#"{"where":{},"data":{"badge":\#(badge)}}"#).badge == change)
    }

    @Test func aBadgeOfZeroIsSentButChangesNoInstallation() throws {
        #expect(try request(#"{"where":{},"data":{"badge":0}}"#).badge == nil)
    }

    @Test func timesAreEpochSecondsAndAnIntervalCountsFromThePushTime() throws {
        let later = try request(#"{"where":{},"push_time":1800000060,"expiration_interval":30}"#)
        #expect(later.pushTime == 1_800_000_060)
        #expect(later.expiration == 1_800_000_090)
        let iso = try request(
            #"{"where":{},"push_time":"2027-01-15T08:10:00.000Z","expiration_time":"2027-01-15T09:00:00Z"}"#)
        #expect(iso.pushTime == 1_800_000_600)
        #expect(iso.expiration == 1_800_003_600)
        let past = try request(#"{"where":{},"push_time":1700000000}"#)
        #expect(past.pushTime == nil, "a time past goes out now")
        let interval = try request(#"{"where":{},"expiration_interval":60}"#)
        #expect(interval.expiration == 1_800_000_060)
    }

    @Test func aScheduledPushIsRebuiltFromItsStatusRow() throws {
        let push = try request(
            #"{"where":{"deviceType":"ios"},"push_time":1800000060,"expiration_interval":30,"data":{"alert":"x","badge":"Increment"}}"#
        )
        let status = PushStatusRecord.initial(
            id: "p1", request: push, body: ["expiration_interval": 30], now: "2027-01-15T08:00:00.000Z",
            pushTime: "2027-01-15T08:01:00.000Z")
        #expect(status["status"] == "scheduled")
        #expect(status["expiry"] == 1_800_000_090_000)
        let rebuilt = try PushRequest(status: status)
        #expect(rebuilt.query.source == ["deviceType": "ios"])
        #expect(rebuilt.data == ["alert": "x", "badge": "Increment"])
        #expect(rebuilt.badge == .increment(1))
        #expect(rebuilt.pushTime == 1_800_000_060)
        #expect(rebuilt.expiration == 1_800_000_090)
    }

    @Test func aStatusCountsEachBatchAndSucceedsWhenTheLastIsIn() throws {
        let push = try request(#"{"where":{},"data":{"alert":"x"}}"#)
        let pending = PushStatusRecord.initial(id: "p1", request: push, body: [:], now: "t0", pushTime: nil)
        #expect(pending["status"] == "pending")
        #expect(pending["numSent"] == 0)
        let running = PushStatusRecord.running(pending, recipients: 150, now: "t1")
        #expect(running["status"] == "running")
        #expect(running["count"] == 2)
        let sent = PushOutcome(installation: "a", deviceToken: "t", deviceType: "ios", transmitted: true, status: 200)
        let gone = PushOutcome(
            installation: "b", deviceToken: "u", deviceType: "ios", transmitted: false, status: 410,
            reason: "Unregistered")
        let android = PushOutcome.noSender(["objectId": "c", "deviceType": "android", "deviceToken": "v"])
        let first = PushStatusRecord.tracked(running, Array(repeating: sent, count: 99) + [gone], now: "t2")
        #expect(first["status"] == "running")
        #expect(first["count"] == 1)
        let last = PushStatusRecord.tracked(first, Array(repeating: sent, count: 49) + [android], now: "t3")
        #expect(last["status"] == "succeeded")
        #expect(last["count"] == nil)
        #expect(last["numSent"] == 148)
        #expect(last["numFailed"] == 2)
        #expect(last["sentPerType"] == ["ios": 148])
        #expect(last["failedPerType"] == ["ios": 1, "android": 1])
        #expect(android.error == "Can not find sender for push type android")
        #expect(gone.tokenIsDead)
    }

    @Test func aPushToNobodySucceedsAtOnceAndOneThatCannotBeSentFails() throws {
        let push = try request(#"{"where":{}}"#)
        let pending = PushStatusRecord.initial(id: "p1", request: push, body: [:], now: "t0", pushTime: nil)
        #expect(PushStatusRecord.running(pending, recipients: 0, now: "t1")["status"] == "succeeded")
        let failed = PushStatusRecord.failed(pending, message: "expired", now: "t1")
        #expect(failed["status"] == "failed")
        #expect(failed["errorMessage"] == ["message": "expired"])
    }
}
