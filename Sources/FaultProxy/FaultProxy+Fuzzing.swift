import Foundation
import JSONValues
import Toxics

/// The fault proxy's reading of Toxiproxy's JSON, reachable by the fuzzer (`Sources/HarnessFuzzer`):
/// a body as a proxy (`POST /proxies`, its name, `listen` and `upstream`), as an array of them
/// (`POST /populate`, with the loop rule among them), and as a toxic (`POST /proxies/{proxy}/toxics`)
/// and a toxic's update.
@_spi(Fuzzing) public enum FaultProxyFuzzing {
    public static func body(_ bytes: [UInt8]) {
        let data = Data(bytes)
        if let toxic = try? Toxic.decode(data) {
            _ = toxic.json
            _ = try? toxic.updated(with: data)
        }
        guard let value = try? JSONValue.parse(data) else { return }
        let objects: [[String: JSONValue]] =
            switch value {
            case .object(let object): [object]
            case .array(let items): items.compactMap(\.objectValue)
            default: []
            }
        var hops: [ProxyRules.Hop] = []
        for fields in objects.prefix(100) {
            let object = GoObject(fields: fields)
            guard let name = try? object.string("name") else { continue }
            _ = ProxyRules.nameProblem(name)
            let upstream = (try? object.string("upstream")).flatMap { $0 }.flatMap {
                try? ProxyRules.hostPort($0, field: "upstream")
            }
            let listen = (try? object.string("listen")).flatMap { $0 }.flatMap {
                try? ProxyRules.hostPort($0, field: "listen")
            }
            if let upstream { hops.append(ProxyRules.Hop(name: name, listen: listen ?? ("", 0), upstream: upstream)) }
        }
        for hop in hops.prefix(100) {
            _ = ProxyRules.loop(from: hop, among: hops, local: ["10.0.0.1"])
        }
    }
}
