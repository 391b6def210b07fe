import DeviceProtocol
import Foundation
import HTTPTypes
import Hummingbird
import ParseModel

/// The dashboard's page, script and style (Sources/FakeParse/Dashboard, compiled in as `DashboardFiles`), served at
/// `/dashboard` with a policy that lets the page load nothing from anywhere else.
struct Dashboard: Sendable {
    let files: [String: (body: String, type: String)]
    let applicationId: String

    init(applicationId: String) {
        files = DashboardFiles.files
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
