import ServiceLifecycle

extension DeviceSimulator: Service {
    /// Accepts app connections (``serve()``) until graceful shutdown or cancellation; then kills every
    /// app and stops background transfers (``shutdown()``), which ends their connections. Call
    /// ``bind()`` first.
    public func run() async throws {
        async let serving: Void = serve()
        try? await gracefulShutdown()
        await shutdown()
        try await serving
    }

    /// Sets what every app finds in its environment besides its own entry's: the services' URLs, which
    /// are known once they listen. Apps launched afterwards see it.
    public func setAppEnvironment(_ environment: [String: String]) {
        configuration.environment = environment
    }
}
