import ServiceLifecycle

extension DeviceSimulator: Service {
    /// Accepts app connections (``serve()``) until graceful shutdown or cancellation; then kills every
    /// app, stops background transfers (``shutdown()``) and ends every connection, also one a process
    /// the device did not launch (an app's child) still holds. Call ``bind()`` first.
    public func run() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.serve() }
            // Its one error is the cancellation that ends the run, an end of the wait as well.
            try? await gracefulShutdown()
            await shutdown()
            group.cancelAll()
            try await group.waitForAll()
        }
    }

    /// Sets what every app finds in its environment besides its own entry's: the services' URLs, which
    /// are known once they listen. Apps launched afterwards see it.
    public func setAppEnvironment(_ environment: [String: String]) {
        configuration.environment = environment
    }

    /// The transfer daemon dials the value's `host:port` for URLs naming the key's (the harness's
    /// `transfer-media` link runs through a fault proxy there).
    public func setTransferRoutes(_ routes: [String: String]) async {
        await transferDaemon.setRoutes(routes)
    }
}
