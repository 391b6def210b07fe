import Foundation
import JSONValues
import Toxics

extension FaultProxy {
    /// A proxy as the API shows it.
    public struct Proxy: Sendable, Equatable {
        public var name: String
        /// `host:port`; once listening, the port bound.
        public var listen: String
        public var upstream: String
        public var enabled: Bool
        public var toxics: [Toxic]

        /// Toxiproxy's JSON for it, fields in its order.
        var json: String {
            "{\"name\":\(Toxic.quoted(name)),\"listen\":\(Toxic.quoted(listen)),\"upstream\":\(Toxic.quoted(upstream)),"
                + "\"enabled\":\(enabled),\"toxics\":[\(toxics.map(\.json).joined(separator: ","))]}"
        }

        /// A proxy from `POST /proxies`' JSON, with Toxiproxy's defaults (`listen` empty: any port;
        /// enabled). `at` names its place in a `/populate` array in the errors.
        static func reading(_ object: GoObject, at place: String = "") throws(ToxiproxyError) -> Proxy {
            guard let name = try object.string("name"), !name.isEmpty else { throw .missing("name" + place) }
            guard let upstream = try object.string("upstream"), !upstream.isEmpty else {
                throw .missing("upstream" + place)
            }
            return Proxy(
                name: name, listen: try object.string("listen") ?? "", upstream: upstream,
                enabled: try object.bool("enabled") ?? true, toxics: [])
        }

        /// The proxies of `POST /populate`'s array, every one checked before any is made, as Toxiproxy does.
        static func list(_ data: Data) throws(ToxiproxyError) -> [Proxy] {
            guard case .array(let items) = try JSONValue.parse(data) else {
                throw .badBody("expected a JSON array of proxies")
            }
            var proxies: [Proxy] = []
            for (index, item) in items.enumerated() {
                guard case .object(let fields) = item else { throw .badBody("proxy \(index + 1) is not an object") }
                proxies.append(try reading(GoObject(fields: fields), at: " at proxy \(index + 1)"))
            }
            return proxies
        }
    }
}
