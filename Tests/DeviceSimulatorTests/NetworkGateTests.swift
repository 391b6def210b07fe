import Testing

@testable import DeviceSimulator

@Suite struct NetworkRequirementsTests {
    let plain = NetworkRequirements(discretionary: false, allowsCellularAccess: true)
    let discretionary = NetworkRequirements(discretionary: true, allowsCellularAccess: true)
    let noCellular = NetworkRequirements(discretionary: false, allowsCellularAccess: false)

    @Test func wifiSuitsEveryTask() {
        for requirements in [plain, discretionary, noCellular] { #expect(requirements.whyNot(on: "wifi") == nil) }
    }

    @Test func cellularSuitsOnlyNonDiscretionaryTasksThatMayUseIt() {
        #expect(plain.whyNot(on: "cellular") == nil)
        #expect(discretionary.whyNot(on: "cellular") == "a discretionary task waits for Wi-Fi")
        #expect(noCellular.whyNot(on: "cellular")?.contains("allowsCellularAccess is false") == true)
    }

    @Test func offlineSuitsNoTask() {
        for requirements in [plain, discretionary, noCellular] {
            #expect(requirements.whyNot(on: "offline")?.contains("no network") == true)
        }
    }
}

@Suite struct NetworkGateTests {
    @Test func aWaitingTaskGoesOnWhenTheNetworkSuitsIt() async {
        let gate = NetworkGate()
        gate.set("cellular")
        let discretionary = NetworkRequirements(discretionary: true, allowsCellularAccess: true)
        let waiting = Task {
            await gate.waitUntilAllowed(discretionary)
            return gate.network
        }
        gate.set("offline")
        gate.set("wifi")
        #expect(await waiting.value == "wifi")
    }

    @Test func aRunningTaskLearnsWhenTheNetworkGoesAway() async {
        let gate = NetworkGate()
        let plain = NetworkRequirements(discretionary: false, allowsCellularAccess: true)
        let watching = Task {
            await gate.waitUntilDisallowed(plain)
            return gate.network
        }
        gate.set("cellular")  // still suits it
        gate.set("offline")
        #expect(await watching.value == "offline")
    }

    @Test func cancellingAWaitEndsIt() async {
        let gate = NetworkGate()
        gate.set("offline")
        let waiting = Task {
            await gate.waitUntilAllowed(NetworkRequirements(discretionary: false, allowsCellularAccess: true))
        }
        waiting.cancel()
        await waiting.value
        #expect(gate.network == "offline")
    }
}
