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
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            throw InstallationError("Parse answered \(status): \(String(decoding: data, as: UTF8.self))")
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
    init(_ description: String) { self.description = description }
}
