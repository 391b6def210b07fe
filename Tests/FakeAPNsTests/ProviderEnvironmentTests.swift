import Testing

@testable import FakeAPNs

/// Which environment a request goes to: Apple's host names decide, any other authority gets the
/// listener's; a connection remembers its last answer for the authority its provider repeats.
@Suite struct ProviderEnvironmentTests {
    @Test(arguments: [
        ("api.push.apple.com", "production"),
        ("api.push.apple.com:443", "production"),
        ("API.Push.Apple.com", "production"),
        ("api.sandbox.push.apple.com", "sandbox"),
        ("api.development.push.apple.com:2197", "sandbox"),
        ("localhost:8443", "listener"),
        ("127.0.0.1:8443", "listener"),
        ("api.push.apple.co", "listener"),
        ("", "listener"),
    ])
    func anAuthorityNamesItsEnvironment(authority: String, environment: String) {
        #expect(ProviderEndpoint.environment(authority: authority, default: "listener") == environment)
    }

    @Test func noAuthorityGetsTheListeners() {
        #expect(ProviderEndpoint.environment(authority: nil, default: "sandbox") == "sandbox")
    }

    @Test func aConnectionAnswersEachRequestForItsOwnAuthority() {
        let connection = ProviderConnection(environment: "sandbox")
        #expect(connection.environment(authority: "api.push.apple.com") == "production")
        #expect(connection.environment(authority: "api.push.apple.com") == "production")
        #expect(connection.environment(authority: "localhost:8443") == "sandbox")
        #expect(connection.environment(authority: nil) == "sandbox")
        #expect(connection.environment(authority: "api.push.apple.com:443") == "production")
        #expect(ProviderConnection(environment: "production").environment(authority: nil) == "production")
    }
}
