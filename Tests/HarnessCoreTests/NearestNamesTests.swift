import Testing

@testable import HarnessCore

/// "Did you mean": the names near a wrong one, and only those.
struct NearestNamesTests {
    static let scenarios = ["silent-push-photo", "silent-push-photo-title", "regular-push-photo", "offline-expiry"]

    @Test func aTypoFindsTheNameItMissed() {
        #expect(NearestNames.closest(to: "silent-push-phtoo", among: Self.scenarios).first == "silent-push-photo")
        #expect(
            NearestNames.closest(to: "device.app.conected", among: ["device.app.connected", "device.app.launched"])
                == ["device.app.connected"])
    }

    @Test func aPartOfANameFindsTheNamesHoldingIt() {
        #expect(
            NearestNames.closest(to: "photo", among: Self.scenarios) == [
                "silent-push-photo", "regular-push-photo", "silent-push-photo-title",
            ])
    }

    @Test func nothingNearIsNoSuggestion() {
        #expect(NearestNames.closest(to: "zebra", among: Self.scenarios).isEmpty)
        #expect(NearestNames.suggestion(for: "zebra", among: Self.scenarios) == nil)
    }

    @Test func theSuggestionReadsAsASentence() {
        #expect(
            NearestNames.suggestion(for: "offline-expiri", among: Self.scenarios) == "did you mean 'offline-expiry'?")
        #expect(
            NearestNames.suggestion(for: "silent-push-phot", among: Self.scenarios)
                == "did you mean 'silent-push-photo' or 'silent-push-photo-title'?")
    }

    @Test func aSwapOfNeighboursIsOneEdit() {
        #expect(NearestNames.editDistance(Array("ab"), Array("ba")) == 1)
        #expect(NearestNames.editDistance(Array("kitten"), Array("sitting")) == 3)
        #expect(NearestNames.editDistance([], Array("abc")) == 3)
    }
}
