import Foundation
import HarnessCore
import Testing

/// What `harness doctor` concludes from what it saw: a test per rule.
struct CheckupTests {
    @Test func aFixedPortInUseIsAProblemWithItsKeyAndAFreePortIsNone() throws {
        var configuration = try ConfigurationLoader.parse(
            "version: 1\nservices:\n  apns: {port: 0, legacyPort: 2195}\n  media: {port: 8080}\n",
            file: "harness.yml", baseDirectory: URL(fileURLWithPath: "/tmp"))
        configuration.backends = []
        let ports = Checkup.fixedPorts(of: configuration)
        #expect(ports.map(\.key) == ["services.apns.legacyPort", "services.media.port", "services.parse.port"])
        var checkup = Checkup()
        checkup.ports(ports) { $0 != 8080 }
        #expect(!checkup.healthy)
        #expect(checkup.findings.filter { !$0.passed }.map(\.what) == ["port 8080 (services.media.port) is in use"])
        #expect(checkup.findings[1].fix?.contains("set services.media.port: 0") == true)
    }

    @Test func aMissingProgramGetsTheFixForItsKind() {
        var checkup = Checkup()
        checkup.programs([("the app 'a'", "python3"), ("the app 'b'", "./build/app"), ("the app 'c'", "ruby")]) { _ in
            false
        }
        #expect(
            checkup.findings.map(\.fix) == [
                "install Python 3 (apt-get install python3)",
                "build it, or correct the command in harness.yml (a relative path is from harness.yml's folder)",
                "install it, or put it on PATH",
            ])
    }

    @Test func aScriptGivenToItsInterpreterIsAFileToFind() {
        #expect(Checkup.scriptArguments(of: ["python3", "-u", "app.py", "--bug", "x"]) == ["app.py"])
        #expect(Checkup.scriptArguments(of: ["sh", "./run.sh", "{file}"]) == ["./run.sh"])
        #expect(Checkup.scriptArguments(of: ["./app", "--name", "v1.2"]).isEmpty)
        var checkup = Checkup()
        checkup.files([("the app 'a'", "app.py")]) { _ in false }
        #expect(checkup.findings.first?.what == "the app 'a' reads app.py, which is not there")
    }

    @Test func aWritableFolderAndALoadedLibraryPass() {
        var checkup = Checkup()
        checkup.stateFolder("/tmp/x/.harness", problem: nil)
        checkup.library("SQLite", version: .success("3.40.1"), install: "apt-get install libsqlite3-0")
        #expect(checkup.healthy)
        checkup.stateFolder("/ro/.harness", problem: "Read-only file system")
        #expect(checkup.findings.last?.fix == "make it writable, or run from a folder you can write")
    }
}
