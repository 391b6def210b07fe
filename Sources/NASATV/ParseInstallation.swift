import DeviceClient
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `PFInstallation.currentInstallation` and `saveInBackground`, reduced to the REST call the Parse iOS
/// SDK makes: the installation id is kept in the app's `Library` so a relaunch updates, not duplicates.
struct ParseInstallation {
    var environment: [String: String]
    var container: ContainerPaths
    var deviceToken: String
    var appIdentifier: String
    /// The request's timeout, in seconds (`timeoutInterval`).
    var timeout: Double
    /// How many times a save is tried (the SDK's `PFCommandRunningDefaultMaxAttemptsCount` is 5).
    var attempts = 5

    /// `saveInBackground`, retried as the Parse iOS SDK's command runner retries a command that failed
    /// for a temporary reason (no answer in time, no connection, a 5xx): five attempts in all, the
    /// first wait between 1 and 2 s, doubling after each. Each retry is logged through `log`.
    func saveInBackground(log: @Sendable (String) async -> Void) async throws {
        var delay = 1 + Double.random(in: 0..<1)
        for attempt in 1... {
            do {
                return try await save()
            } catch let error as InstallationError where error.temporary {
                guard attempt < attempts else {
                    await log("installation save attempt \(attempt) failed (\(error)); giving up")
                    throw error
                }
                await log(
                    "installation save attempt \(attempt) failed (\(error)); retrying in \(String(format: "%.1f", delay)) s"
                )
                try await Task.sleep(for: .milliseconds(Int64(delay * 1000)))
                delay *= 2
            }
        }
    }

    func save() async throws {
        guard let base = environment["HARNESS_PARSE_URL"], let url = URL(string: base + "/classes/_Installation") else {
            throw InstallationError("HARNESS_PARSE_URL is not set")
        }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(environment["HARNESS_PARSE_APPLICATION_ID"], forHTTPHeaderField: "X-Parse-Application-Id")
        if let key = environment["HARNESS_PARSE_CLIENT_KEY"] {
            request.setValue(key, forHTTPHeaderField: "X-Parse-Client-Key")
        }
        let body: [String: JSONValue] = [
            "deviceType": "ios",
            "deviceToken": .string(deviceToken),
            "installationId": .string(try installationId()),
            "appIdentifier": .string(appIdentifier),
            "appName": "NASA TV",
            "channels": [""],
            "timeZone": "UTC",
        ]
        request.httpBody = Data(JSONValue.object(body).jsonString().utf8)
        request.timeoutInterval = timeout
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await URLSession.shared.data(for: request)
        } catch let error as URLError {
            // Timeouts and lost or refused connections are temporary, as the SDK marks them.
            throw InstallationError(
                "\(error.code == .timedOut ? "timed out" : "no connection"): \(error.code.rawValue)", temporary: true)
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            throw InstallationError(
                "Parse answered \(status): \(String(decoding: data, as: UTF8.self))", temporary: status >= 500)
        }
    }

    private func installationId() throws -> String {
        let library = container.home + "/Library"
        let path = library + "/parse-installation-id"
        if let existing = try? String(contentsOfFile: path, encoding: .utf8) { return existing }
        let id = UUID().uuidString.lowercased()
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        try id.write(toFile: path, atomically: true, encoding: .utf8)
        return id
    }
}

struct InstallationError: Error, CustomStringConvertible {
    var description: String
    /// Worth trying again: the SDK retries these.
    var temporary = false
    init(_ description: String, temporary: Bool = false) {
        self.description = description
        self.temporary = temporary
    }
}
