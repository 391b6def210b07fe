import Crypto
import FakeAPNs
import Foundation
import Testing

@Suite struct ProviderConnectionStateTests {
    let key = ProviderSigningKey(teamId: "TEAM123456", keyId: "KEY1234567")
    let otherKey = ProviderSigningKey(teamId: "TEAM123456", keyId: "KEY7654321")
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    var verifier: ProviderTokenVerifier {
        var verifier = ProviderTokenVerifier()
        verifier.register(key)
        verifier.register(otherKey)
        return verifier
    }

    func jwt(_ key: ProviderSigningKey, iat: Double) -> String {
        let encode = { (data: Data) in
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let input =
            encode(Data(#"{"alg":"ES256","kid":"\#(key.keyId)"}"#.utf8)) + "."
            + encode(Data(#"{"iss":"\#(key.teamId)","iat":\#(iat)}"#.utf8))
        return input + "." + encode(try! key.privateKey.signature(for: Data(input.utf8)).rawRepresentation)
    }

    func reason(_ result: Result<ProviderTokenVerifier.Claims, APNsReason>) -> String? {
        if case .failure(let reason) = result { return reason.reason }
        return nil
    }

    @Test func theFirstValidTokenAuthenticatesTheConnection() {
        var state = ProviderConnectionState()
        #expect(!state.isAuthenticated)
        #expect(
            reason(state.authenticate("garbage", environment: "sandbox", verifier: verifier, now: now))
                == "InvalidProviderToken")
        #expect(!state.isAuthenticated)
        let token = jwt(key, iat: now.timeIntervalSince1970 - 60)
        #expect(reason(state.authenticate(token, environment: "sandbox", verifier: verifier, now: now)) == nil)
        #expect(state.isAuthenticated)
        #expect(state.boundKeyId == key.keyId)
    }

    @Test func aReusedTokenExpiresAfterAnHour() {
        var state = ProviderConnectionState()
        let token = jwt(key, iat: now.timeIntervalSince1970)
        #expect(reason(state.authenticate(token, environment: "sandbox", verifier: verifier, now: now)) == nil)
        #expect(
            reason(
                state.authenticate(token, environment: "sandbox", verifier: verifier, now: now.addingTimeInterval(3599))
            ) == nil)
        #expect(
            reason(
                state.authenticate(token, environment: "sandbox", verifier: verifier, now: now.addingTimeInterval(3601))
            )
                == "ExpiredProviderToken")
    }

    @Test func aNewTokenWithinTwentyMinutesIsTooManyUpdates() {
        var state = ProviderConnectionState()
        let first = jwt(key, iat: now.timeIntervalSince1970)
        _ = state.authenticate(first, environment: "sandbox", verifier: verifier, now: now)
        let soon = jwt(key, iat: now.timeIntervalSince1970 + 600)
        #expect(
            reason(
                state.authenticate(soon, environment: "sandbox", verifier: verifier, now: now.addingTimeInterval(600)))
                == "TooManyProviderTokenUpdates")
        let later = jwt(key, iat: now.timeIntervalSince1970 + 1300)
        #expect(
            reason(
                state.authenticate(later, environment: "sandbox", verifier: verifier, now: now.addingTimeInterval(1300))
            ) == nil)
    }

    @Test func anotherKeyOnTheSameConnectionIsUnrelated() {
        var state = ProviderConnectionState()
        _ = state.authenticate(
            jwt(key, iat: now.timeIntervalSince1970), environment: "sandbox", verifier: verifier, now: now)
        let other = jwt(otherKey, iat: now.timeIntervalSince1970 + 1300)
        #expect(
            reason(
                state.authenticate(other, environment: "sandbox", verifier: verifier, now: now.addingTimeInterval(1300))
            )
                == "UnrelatedKeyIdInToken")
    }

    @Test func aKeyOfTheOtherEnvironmentIsRefused() {
        var verifier = ProviderTokenVerifier()
        verifier.register(key, environment: "production")
        var state = ProviderConnectionState()
        #expect(
            reason(
                state.authenticate(
                    jwt(key, iat: now.timeIntervalSince1970), environment: "sandbox", verifier: verifier, now: now))
                == "BadEnvironmentKeyIdInToken")
    }

    /// Apple: `iat` "no more than one hour from the current time", either way.
    @Test(
        arguments: [
            (-3600.0, nil), (-3601.0, "ExpiredProviderToken"), (-86_400.0, "ExpiredProviderToken"), (0.0, nil),
            (3600.0, nil), (3601.0, "InvalidProviderToken"), (86_400.0, "InvalidProviderToken"),
            (1e300, "InvalidProviderToken"), (-1e300, "ExpiredProviderToken"),
        ] as [(Double, String?)])
    func theTokenMustBeIssuedWithinAnHourOfNow(offset: Double, refusal: String?) {
        var state = ProviderConnectionState()
        let token = jwt(key, iat: offset > 1e15 || offset < -1e15 ? offset : now.timeIntervalSince1970 + offset)
        #expect(reason(state.authenticate(token, environment: "sandbox", verifier: verifier, now: now)) == refusal)
        #expect(state.isAuthenticated == (refusal == nil))
    }
}
