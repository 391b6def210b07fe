import Testing
import Yams

@testable import HarnessCore

/// Each key of a harness.yml mapping is listed once, with what reading it does: known keys are read
/// in the table's order, others are errors that name them and the known ones.
@Suite struct KeyTableTests {
    struct Target {
        var order: [String] = []
        var port = 0
    }

    let table = KeyTable<Target>([
        "port": { value, target in
            target.port = try value.port()
            target.order.append("port")
        },
        "name": { _, target in target.order.append("name") },
    ])

    func reader(_ text: String) throws -> YAMLReader {
        YAMLReader(file: "harness.yml", node: try #require(try Yams.compose(yaml: text)), path: "services.apns")
    }

    @Test func knownKeysAreReadInTheTablesOrderAndReturned() throws {
        var target = Target()
        let found = try table.read(try reader("name: x\nport: 2197"), into: &target)
        #expect(target.order == ["port", "name"] && target.port == 2197)
        #expect(found == ["port", "name"])
    }

    @Test func aMissingKeyKeepsTheBaseValue() throws {
        let target = try table.overlay(try reader("name: x"), on: Target(port: 44447))
        #expect(target.port == 44447 && target.order == ["name"])
    }

    @Test func anUnknownKeyIsAnErrorNamingItsPathAndTheKnownKeys() throws {
        var target = Target()
        let error = try #require(throws: ConfigurationError.self) {
            try table.read(try reader("prot: 2197"), into: &target)
        }
        #expect(error.keyPath == "services.apns.prot")
        #expect(error.message == "unknown key 'prot'; known keys here: name, port")
        #expect(error.line == 1)
    }

    @Test func aBadValueIsAnErrorAtItsKey() throws {
        var target = Target()
        let error = try #require(throws: ConfigurationError.self) {
            try table.read(try reader("port: 70000"), into: &target)
        }
        #expect(error.keyPath == "services.apns.port")
    }
}
