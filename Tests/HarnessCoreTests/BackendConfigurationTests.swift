import Backends
import Foundation
import HarnessCore
import Testing

/// harness.yml's `backends` read strictly, and how a run turns them into processes to start: a test per
/// rule of docs/backends.md.
@Suite struct BackendConfigurationTests {
    func file(backends: String, scenarioBackends: String = "[api]") -> String {
        """
        version: 1
        apps:
          app: {bundleId: com.example.app, command: [app]}
        backends:
        \(backends)
        scenarios:
          one:
            backends: \(scenarioBackends)
            steps: [{launch: app}]
        """
    }

    func error(_ text: String) -> ConfigurationError? { configurationError(text) }

    @Test func readsEveryKey() throws {
        let configuration = try ConfigurationLoader.parse(
            file(
                backends: """
                      api:
                        command: [python3, server.py, --port, "${HARNESS_PORT}"]
                        workingDirectory: backend
                        environment: {MODE: test}
                        port: 8080
                        ready: {http: /health}
                        readyTimeout: 10s
                        stopGrace: 2s
                      worker:
                        command: [./worker]
                    """, scenarioBackends: "[worker, api]"), file: "harness.yml")
        let api = try #require(configuration.backend(named: "api"))
        #expect(api.command == ["python3", "server.py", "--port", "${HARNESS_PORT}"])
        #expect(api.workingDirectory == "backend")
        #expect(api.environment == ["MODE": "test"])
        #expect(api.port == .fixed(8080))
        #expect(api.ready == .http(path: "/health"))
        #expect(api.readyTimeout == .seconds(10) && api.stopGrace == .seconds(2))
        let worker = try #require(configuration.backend(named: "worker"))
        #expect(worker.port == nil && worker.ready == .started)
        #expect(worker.readyTimeout == .seconds(30) && worker.stopGrace == .seconds(5))
        // The scenario's order, which is the order they start in.
        #expect(configuration.scenario(named: "one")?.backends == ["worker", "api"])
    }

    @Test func aBackendWithAPortIsReadyWhenThePortAccepts() throws {
        let configuration = try ConfigurationLoader.parse(
            file(backends: "  api: {command: [server], port: free}"), file: "harness.yml")
        #expect(configuration.backend(named: "api")?.ready == .port)
        #expect(configuration.backend(named: "api")?.port == .free)
    }

    @Test(arguments: [
        ("  api: {port: 80}", "a backend needs a 'command' (a list)"),
        ("  api: {command: []}", "the command must not be empty"),
        ("  api: {command: [s], port: 0}", "a port is 1 to 65535, or free"),
        ("  api: {command: [s], port: any}", "a port is 1 to 65535, or free"),
        ("  api: {command: [s], ready: port}", "ready: port needs the backend's 'port'"),
        ("  api: {command: [s], ready: {http: /health}}", "ready: http needs the backend's 'port'"),
        ("  api: {command: [s], port: 1, ready: {http: health}}", "starts with '/'"),
        ("  api: {command: [s], ready: soon}", "ready is port, started, {http: /path} or {line: text}, not 'soon'"),
        ("  api: {command: [s], ready: {line: ''}}", "must not be empty"),
        ("  api: {command: [s], ready: {line: a, http: /b}}", "ready takes one of http or line"),
        ("  api: {command: [s], readyTimeout: 2h}", "at most"),
        ("  api: {command: [s], environment: {1X: y}}", "'1X' is not a variable name"),
        ("  api: {command: [s], colour: red}", "unknown key 'colour'"),
        ("  'a b': {command: [s]}", "cannot be used as a name"),
        ("  api: {command: [s]}\n  API: {command: [s]}", "would both be HARNESS_BACKEND_API_URL"),
    ])
    func badBackendsAreRefusedWithWhatAndWhere(entry: String, message: String) throws {
        let error = try #require(self.error(file(backends: entry, scenarioBackends: "[]")))
        #expect(error.description.contains(message), "\(error)")
        #expect(error.keyPath.hasPrefix("backends."), "\(error)")
    }

    @Test func aScenarioNamesOnlyDeclaredBackendsAndEachOnce() throws {
        let missing = try #require(error(file(backends: "  api: {command: [s]}", scenarioBackends: "[db]")))
        #expect(missing.description.contains("no backend named 'db'; backends: api"), "\(missing)")
        #expect(missing.keyPath == "scenarios.one.backends[0]")
        let twice = try #require(error(file(backends: "  api: {command: [s]}", scenarioBackends: "[api, api]")))
        #expect(twice.description.contains("'api' is named twice"), "\(twice)")
    }

    @Test func ephemeralPortsGiveEveryBackendWithAPortAFreeOne() throws {
        var configuration = try ConfigurationLoader.parse(
            file(backends: "  api: {command: [s], port: 8080}\n  worker: {command: [w]}"), file: "harness.yml")
        configuration.useEphemeralPorts()
        #expect(configuration.backend(named: "api")?.port == .free)
        #expect(configuration.backend(named: "worker")?.port == nil)
    }

    // MARK: the launch plan

    let base = URL(fileURLWithPath: "/project")
    let endpoints = ["HARNESS_PARSE_URL": "http://127.0.0.1:1337/parse", "HARNESS_APNS_TOPIC": "com.example.app"]

    func plan(_ backends: [BackendConfiguration], ports: [String: Int], inherited: [String: String] = [:])
        throws(BackendPlanError) -> BackendLaunchPlan
    {
        try BackendLaunchPlan(
            backends, ports: ports, endpoints: endpoints, inherited: inherited, baseDirectory: base,
            dataDirectory: { URL(fileURLWithPath: "/state/backends/\($0)") })
    }

    @Test func eachBackendGetsTheEndpointsItsPortItsFolderAndEveryBackendsURL() throws {
        var api = BackendConfiguration(name: "api", command: ["server"])
        api.port = .free
        api.ready = .port
        var worker = BackendConfiguration(name: "push-worker", command: ["worker"])
        worker.environment = ["HARNESS_PARSE_URL": "overridden"]
        let planned = try plan([api, worker], ports: ["api": 20001])
        #expect(planned.appEnvironment == ["HARNESS_BACKEND_API_URL": "http://127.0.0.1:20001"])
        let first = planned.backends[0]
        #expect(first.environment["HARNESS_PORT"] == "20001")
        #expect(first.environment["HARNESS_DATA_DIR"] == "/state/backends/api")
        #expect(first.environment["HARNESS_PARSE_URL"] == "http://127.0.0.1:1337/parse")
        #expect(first.environment["HARNESS_BACKEND_API_URL"] == "http://127.0.0.1:20001")
        #expect(first.readiness == .port(20001))
        #expect(first.workingDirectory == base)
        let second = planned.backends[1]
        #expect(second.environment["HARNESS_PORT"] == nil, "a backend without a port is told none")
        #expect(second.environment["HARNESS_BACKEND_API_URL"] == "http://127.0.0.1:20001")
        #expect(second.environment["HARNESS_PARSE_URL"] == "overridden", "its own environment comes last")
        #expect(second.readiness == .started)
    }

    @Test func variablesAreExpandedInTheCommandAndTheEnvironment() throws {
        var api = BackendConfiguration(name: "api", command: ["server", "--port=${HARNESS_PORT}", "$HOME", "$${X}"])
        api.port = .fixed(8080)
        api.ready = .http(path: "/ready")
        api.environment = ["WHO": "${USER} at ${HARNESS_APNS_TOPIC}"]
        api.workingDirectory = "backend/../server"
        let planned = try plan([api], ports: ["api": 8080], inherited: ["USER": "ci"])
        let backend = planned.backends[0]
        #expect(backend.command == ["server", "--port=8080", "$HOME", "${X}"])
        #expect(backend.environment["WHO"] == "ci at com.example.app")
        #expect(backend.readiness == .http(port: 8080, path: "/ready"))
        #expect(backend.workingDirectory.path == "/project/server")
    }

    @Test func aVariableThatIsNotSetIsAnError() throws {
        let api = BackendConfiguration(name: "api", command: ["server", "${NOPE}"])
        #expect(throws: BackendPlanError.self) { try plan([api], ports: [:]) }
        do {
            _ = try plan([api], ports: [:])
        } catch {
            #expect(error.description.hasPrefix("backends.api: command[1] names ${NOPE}, which is not set"))
            #expect(error.description.contains("HARNESS_DATA_DIR"))
        }
    }

    @Test func theURLVariableSpellsTheNameInCapitals() {
        #expect(
            BackendConfiguration(name: "push-chat.server_2", command: []).urlVariable
                == "HARNESS_BACKEND_PUSH_CHAT_SERVER_2_URL")
    }
}
