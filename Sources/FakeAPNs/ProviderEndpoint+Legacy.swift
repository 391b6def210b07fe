import Foundation

extension ProviderEndpoint {
    /// One notification from the legacy binary gateway, through the HTTP/2 API's rules: the same
    /// validation (the certificate's bundle id is the topic), injected faults, log and delivery. Returns
    /// the status to answer with, or nil when it was taken (the gateway never answers success).
    /// `connection` carries the push certificate as its credential.
    func handleLegacy(_ notification: LegacyFrameReader.Notification, connection: ProviderConnection) -> LegacyStatus? {
        handle(Self.legacyRequest(notification), connection: connection).refusal.flatMap(LegacyStatus.answering)
    }

    /// The HTTP/2 request a legacy notification stands for: its token in the path, its expiry and
    /// priority as headers, no topic (the certificate's bundle id is the topic).
    static func legacyRequest(_ notification: LegacyFrameReader.Notification) -> ProviderRequest {
        var headers = [
            (name: ":method", value: "POST"),
            (name: ":path", value: "/3/device/" + Hex.lowercase(notification.token)),
        ]
        if let expiry = notification.expiry { headers.append((name: "apns-expiration", value: "\(expiry)")) }
        if let priority = notification.priority { headers.append((name: "apns-priority", value: "\(priority)")) }
        return ProviderRequest(headers: headers, body: Data(notification.payload))
    }
}
