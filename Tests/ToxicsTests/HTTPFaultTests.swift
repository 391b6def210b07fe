import Foundation
import Testing
import Toxics

/// The HTTP-aware toxics' rule, on bytes given in pieces: a row per case.
struct HTTPFaultTests {
    static func fault(_ json: String) throws -> HTTPFault {
        try #require(HTTPFault(try Toxic.decoding(Data(json.utf8))))
    }

    static let request = Array("GET /photos/dailyphoto.jpg HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
    static let response = Array("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789".utf8)

    @Test func statusHoldsTheRequestUntilItsHeadIsCompleteThenAnswers() throws {
        var fault = try Self.fault(#"{"type":"http_status","attributes":{"status":503,"retry_after":2}}"#)
        // Split inside the blank line: the head is complete only with the last byte.
        #expect(fault.inspect(Self.request.dropLast(2)) == .hold)
        guard case .answer(let bytes) = fault.inspect(Self.request.suffix(2)) else {
            Issue.record("the complete head is answered")
            return
        }
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"))
        #expect(text.contains("\r\nRetry-After: 2\r\n") && text.contains("\r\nConnection: close\r\n"))
        let body = text.components(separatedBy: "\r\n\r\n").last ?? ""
        #expect(text.contains("Content-Length: \(body.utf8.count)\r\n"))
        // Done: anything later passes (the connection is closing anyway).
        #expect(fault.inspect(Self.request) == .pass)
    }

    @Test func cutLetsTheHeadAndThatMuchBodyThrough() throws {
        let head = Self.response.count - 10
        var fault = try Self.fault(#"{"type":"http_cut","attributes":{"body_bytes":4}}"#)
        #expect(fault.inspect(Self.response.prefix(head - 1)) == .pass)
        // The rest of the head and 4 body bytes: 1 + 4 kept of this piece, then a FIN.
        #expect(fault.inspect(Self.response.suffix(11)) == .cut(keep: 5, how: .fin))
        var atTheHead = try Self.fault(#"{"type":"http_cut","attributes":{"body_bytes":0,"reset":1}}"#)
        #expect(atTheHead.inspect(Self.response) == .cut(keep: head, how: .reset))
        // A short body passes whole: the cut comes only once that many body bytes were seen.
        var beyond = try Self.fault(#"{"type":"http_cut","attributes":{"body_bytes":100}}"#)
        #expect(beyond.inspect(Self.response) == .pass)
    }

    @Test func bytesThatAreNotHTTPPass() throws {
        // A TLS record starts with 0x16, not a method: it passes at once.
        var tls = try Self.fault(#"{"type":"http_status","attributes":{"status":500}}"#)
        #expect(tls.inspect([0x16, 0x03, 0x01, 0x02, 0x00]) == .pass)
        #expect(tls.inspect(Self.request) == .pass)
        // HTTP/2's prior-knowledge preface looks like a head, and is none.
        var h2c = try Self.fault(#"{"type":"http_status","attributes":{"status":500}}"#)
        #expect(h2c.inspect(Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)) == .pass)
        // Capitals without a head: held while it looks, given up after 64 KiB.
        var noise = try Self.fault(#"{"type":"http_status","attributes":{"status":500}}"#)
        let capitals = [UInt8](repeating: UInt8(ascii: "A"), count: 40_000)
        #expect(noise.inspect(capitals) == .hold)
        #expect(noise.inspect(capitals) == .pass)
    }

    @Test func anInterimResponseIsNotTheOneCut() throws {
        let interim = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
        var fault = try Self.fault(#"{"type":"http_cut","attributes":{"body_bytes":2}}"#)
        let head = Self.response.count - 10
        #expect(fault.inspect(interim + Self.response) == .cut(keep: interim.count + head + 2, how: .fin))
    }

    @Test(arguments: [
        (
            #"{"type":"http_status"}"#,
            "bad request body: attributes.status of an http_status toxic must be from 100 to 599, not 0"
        ),
        (
            #"{"type":"http_status","attributes":{"status":600}}"#,
            "bad request body: attributes.status of a http_status toxic must be from 100 to 599, not 600"
        ),
        (
            #"{"type":"http_cut","stream":"upstream"}"#,
            "bad request body: an http_cut toxic acts on responses: its stream is downstream"
        ),
        (
            #"{"type":"http_status","stream":"downstream","attributes":{"status":503}}"#,
            "bad request body: an http_status toxic acts on requests: its stream is upstream"
        ),
    ])
    func badHTTPToxicsAre400s(_ json: String, _ message: String) {
        #expect(throws: ToxiproxyError(message, status: 400)) { try Toxic.decoding(Data(json.utf8)) }
    }

    @Test func anHTTPStatusToxicDefaultsToTheRequests() throws {
        let toxic = try Toxic.decoding(Data(#"{"type":"http_status","attributes":{"status":429}}"#.utf8))
        #expect(toxic.stream == .upstream && toxic.name == "http_status_upstream")
    }
}
