/// An HTTP-aware toxic on one direction of one HTTP/1.x connection, as a value: bytes in, in the
/// order they were read, and what to do with them out. Beyond Toxiproxy, which sees only bytes.
///
/// - `http_status` (requests): the connection's first request never reaches the server: once its
///   header block is complete the proxy answers it with `status` (and `Retry-After` when given) and
///   closes the connection (`Connection: close`), so each new connection is answered the same way.
/// - `http_cut` (responses): once the first response's header block is through, `body_bytes` bytes of
///   its body pass and the connection is closed (FIN, or RST with `reset` 1): a download cut inside
///   its body.
///
/// Only the first message of a connection is looked at (after any interim 1xx response), and
/// `http_cut` counts every byte after its head: more than the body's length reaches into the next
/// response on a kept-alive connection. An HTTP toxic acts on connections opened after it was added.
/// Bytes that do not start as HTTP/1.x does (TLS, HTTP/2's preface), or show no head within 64 KiB,
/// pass untouched.
public struct HTTPFault: Sendable, Equatable {
    public enum Verdict: Sendable, Equatable {
        /// Let these bytes through as any others.
        case pass
        /// Let the first `keep` bytes through, then close the connection after them.
        case cut(keep: Int, how: ToxicPipe.Closing)
        /// Hold these bytes (a request that will not reach the server).
        case hold
        /// Answer the client with this response in place of the request, then close.
        case answer([UInt8])
    }

    package enum Rule: Sendable, Equatable {
        case status(Int, retryAfter: Int64)
        case cut(bodyBytes: Int64, reset: Bool)
    }

    package let rule: Rule
    /// How much of `\r\n\r\n` the last bytes matched.
    private var matched = 0
    private var headerBytes = 0
    private var inBody = false
    private var bodySeen: Int64 = 0
    /// The head's first bytes, enough to tell a status line, an interim response or HTTP/2's preface.
    private var start: [UInt8] = []
    /// Acted, or gave up: later bytes pass.
    private(set) var done = false

    /// The longest header block looked for before the bytes are taken for something other than HTTP/1.x.
    package static let headerLimit = 65_536

    /// The HTTP toxic among `toxic`, if it is one.
    public init?(_ toxic: Toxic) {
        switch toxic.kind {
        case .httpStatus: rule = .status(Int(toxic["status"]), retryAfter: toxic["retry_after"])
        case .httpCut: rule = .cut(bodyBytes: toxic["body_bytes"], reset: toxic["reset"] != 0)
        default: return nil
        }
    }

    /// What to do with `bytes`, read next.
    public mutating func inspect(_ bytes: some Collection<UInt8>) -> Verdict {
        guard !done else { return .pass }
        var index = 0
        for byte in bytes {
            index += 1
            if !inBody, start.count < 16 {
                // HTTP/1.x messages start with a method or "HTTP/" in capitals; TLS (0x16) and other
                // bytes do not, and pass untouched.
                if start.isEmpty, !(65...90).contains(byte) {
                    done = true
                    return .pass
                }
                start.append(byte)
            }
            if inBody {
                bodySeen += 1
                if case .cut(let limit, let reset) = rule, bodySeen >= limit {
                    done = true
                    return .cut(keep: index, how: reset ? .reset : .fin)
                }
                continue
            }
            headerBytes += 1
            let wanted: [UInt8] = [13, 10, 13, 10]
            matched = byte == wanted[matched] ? matched + 1 : (byte == 13 ? 1 : 0)
            if matched == 4 {
                // HTTP/2's prior-knowledge preface looks like a head, and is none.
                if start.starts(with: Array("PRI * HTTP/2.0".utf8)) {
                    done = true
                    return .pass
                }
                // An interim response (100 Continue) comes before the one to cut: look again.
                if start.starts(with: Array("HTTP/1.".utf8)), start.count > 9, start[9] == UInt8(ascii: "1") {
                    matched = 0
                    headerBytes = 0
                    start = []
                    continue
                }
                inBody = true
                if case .status(let status, let retryAfter) = rule {
                    done = true
                    return .answer(Self.response(status: status, retryAfter: retryAfter))
                }
                if case .cut(let limit, let reset) = rule, limit == 0 {
                    done = true
                    return .cut(keep: index, how: reset ? .reset : .fin)
                }
            } else if headerBytes >= Self.headerLimit {
                // Not HTTP/1.x (TLS, HTTP/2, a stream of bytes): nothing to act on.
                done = true
                return .pass
            }
        }
        if case .status = rule { return .hold }
        return .pass
    }

    /// `HTTP/1.1 503 Service Unavailable` with a short text body and `Connection: close`.
    package static func response(status: Int, retryAfter: Int64) -> [UInt8] {
        let reason = reasons[status] ?? "Fault Proxy"
        let body = "\(status) \(reason) (the fault proxy's http_status toxic)\n"
        var head = "HTTP/1.1 \(status) \(reason)\r\nContent-Type: text/plain; charset=utf-8\r\n"
        head += "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n"
        if retryAfter > 0 { head += "Retry-After: \(retryAfter)\r\n" }
        return Array((head + "\r\n" + body).utf8)
    }

    package static let reasons: [Int: String] = [
        400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 408: "Request Timeout",
        409: "Conflict", 413: "Content Too Large", 429: "Too Many Requests", 500: "Internal Server Error",
        502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
    ]
}
