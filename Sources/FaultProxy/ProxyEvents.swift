import HarnessTimeline
import Toxics

/// What the fault proxy tells the timeline: proxies and toxics as they change, clients turned away
/// because the upstream could not be reached, and connections a toxic ended.
struct ProxyEvents: Sendable {
    let timeline: Timeline?

    func publish(_ kind: EventKind, _ attributes: EventAttributes) {
        timeline?.publish(kind, source: "proxy", attributes)
    }

    func upstreamRefused(_ proxy: String, _ upstream: String, _ why: String) {
        publish(.proxyUpstreamRefused, ["proxy": proxy, "upstream": upstream, "why": why])
    }

    /// A proxy had its most connections open and closed a new client at once: said once each time it
    /// fills up.
    func limitReached(_ proxy: String, _ limit: String) {
        timeline?.publish(
            .serviceLimitReached, source: "harness", ["service": "proxy", "limit": limit, "proxy": proxy])
    }

    func cut(_ proxy: String, _ report: ProxiedConnection.ConnectionReport) {
        if let status = report.answered {
            publish(.proxyHTTPAnswered, ["proxy": proxy, "status": "\(status)"])
            return
        }
        publish(
            .proxyConnectionCut,
            [
                "proxy": proxy, "stream": report.stream.rawValue, "how": report.how == .reset ? "RST" : "FIN",
                "atByte": "\(report.written)",
            ])
    }

    func toxic(_ kind: EventKind, _ proxy: String, _ toxic: Toxic) {
        var attributes = [
            "proxy": proxy, "toxic": toxic.name, "type": toxic.kind.rawValue, "stream": toxic.stream.rawValue,
        ]
        attributes["toxicity"] = "\(toxic.toxicity)"
        for (name, value) in toxic.attributes { attributes[name] = "\(value)" }
        publish(kind, EventAttributes(attributes))
    }
}
