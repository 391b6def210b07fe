import DeviceProtocol
import Foundation
import HTTPTypes
import Hummingbird
import ParseModel

/// The dashboard's page, script and style (Sources/FakeParse/Dashboard), read once and served at
/// `/dashboard` with a policy that lets the page load nothing from anywhere else.
struct Dashboard: Sendable {
    let files: [String: (body: String, type: String)]
    let applicationId: String

    init(applicationId: String) throws {
        guard let folder = Bundle.module.url(forResource: "Dashboard", withExtension: nil) else {
            throw ParseConfigurationError("the dashboard's files are missing from FakeParse's resources")
        }
        var files: [String: (body: String, type: String)] = [:]
        for (name, type) in [
            ("index.html", "text/html; charset=utf-8"), ("dashboard.js", "text/javascript; charset=utf-8"),
            ("dashboard.css", "text/css; charset=utf-8"), ("icon.svg", "image/svg+xml"),
        ] {
            let url = folder.appendingPathComponent(name)
            do {
                files[name] = (try String(contentsOf: url, encoding: .utf8), type)
            } catch {
                throw ParseConfigurationError("cannot read the dashboard's \(url.path): \(error)")
            }
        }
        self.files = files
        self.applicationId = applicationId
    }

    func register(on router: Router<BasicRequestContext>) {
        router.get("dashboard") { _, _ in response("index.html") }
        router.get("dashboard/dashboard.js") { _, _ in response("dashboard.js") }
        router.get("dashboard/dashboard.css") { _, _ in response("dashboard.css") }
        router.get("dashboard/icon.svg") { _, _ in response("icon.svg") }
        router.get("dashboard/config.json") { _, _ in
            // The application id is no secret; the master key is asked of the person.
            let body = ParseJSON.text(["applicationId": .string(applicationId), "serverURL": "/parse"])
            return Response(
                status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: body)))
        }
    }

    private func response(_ name: String) -> Response {
        let file = files[name]!
        return Response(
            status: .ok,
            headers: [
                .contentType: file.type, .cacheControl: "no-store",
                .contentSecurityPolicy:
                    "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
                HTTPField.Name("X-Content-Type-Options")!: "nosniff",
            ],
            body: .init(byteBuffer: ByteBuffer(string: file.body)))
    }
}
