/// The fault proxy's events: a part of ``EventCatalogue/all`` of their own.
extension EventCatalogue {
    static let proxy: [EventSpec] = [
        EventSpec(
            kind: .proxyCreated, source: "proxy", attributes: ["proxy", "listen", "upstream"],
            meaning: "A proxy named `proxy` listens at `listen` and relays to `upstream`."),
        EventSpec(
            kind: .proxyUpdated, source: "proxy", attributes: ["proxy", "listen", "upstream", "enabled"],
            optional: ["why"],
            meaning:
                "A proxy was changed; `enabled` false closes its listener and every connection (Toxiproxy's `down`). `why`: a disabled proxy `POST /reset` could not enable (it would make a loop, or cannot listen)."
        ),
        EventSpec(
            kind: .proxyDeleted, source: "proxy", attributes: ["proxy"],
            meaning: "A proxy was removed, its connections closed."),
        EventSpec(
            kind: .proxyToxicAdded, source: "proxy", attributes: ["proxy", "toxic", "type", "stream", "toxicity"],
            optional: toxicAttributes,
            meaning:
                "A toxic was put on a proxy, for new and open connections; its attributes (`latency`, `rate`, …) as given."
        ),
        EventSpec(
            kind: .proxyToxicUpdated, source: "proxy", attributes: ["proxy", "toxic", "type", "stream", "toxicity"],
            optional: toxicAttributes, meaning: "A toxic's attributes or toxicity changed."),
        EventSpec(
            kind: .proxyToxicRemoved, source: "proxy", attributes: ["proxy", "toxic", "type", "stream", "toxicity"],
            optional: toxicAttributes, meaning: "A toxic was taken off; the link is as before it."),
        EventSpec(
            kind: .proxyUpstreamRefused, source: "proxy", attributes: ["proxy", "upstream", "why"],
            meaning:
                "A client was accepted and closed at once: the proxy could not connect to its `upstream` (`why`)."),
        EventSpec(
            kind: .proxyConnectionCut, source: "proxy", attributes: ["proxy", "stream", "how", "atByte"],
            meaning:
                "A toxic ended a connection (`how`: FIN for `limit_data` and `timeout`, RST for `reset_peer`) after `atByte` bytes went through in its `stream`."
        ),
        EventSpec(
            kind: .proxyHTTPAnswered, source: "proxy", attributes: ["proxy", "status"],
            meaning:
                "An `http_status` toxic answered a request with `status` in the server's place (which never saw it), and closed the connection."
        ),
    ]

    /// The attributes of every toxic type, as the toxic events carry them.
    static let toxicAttributes = [
        "latency", "jitter", "rate", "delay", "timeout", "average_size", "size_variation", "bytes", "per_million",
        "retransmit", "status", "retry_after", "body_bytes", "reset",
    ]
}
