import Foundation

/// A HAR 1.2 archive (the HTTP Archive format browsers, mitmproxy and Charles export): the fields the
/// spec requires, the optional ones the harness uses, and PushHarness's own `_`-prefixed fields.
///
/// Times are fractional milliseconds (`Double`), as Chrome and mitmproxy write them. Custom fields are
/// only meaningful in a file PushHarness wrote (the spec: parsers must ignore custom fields written by
/// another tool), so ``HARReader`` drops them when `log.creator.name` is someone else's.
public struct HAR: Codable, Sendable, Equatable {
    public var log: Log

    public init(log: Log) { self.log = log }

    /// The name in `log.creator` that makes the `_` fields ours.
    public static let creatorName = "PushHarness"

    public struct Log: Codable, Sendable, Equatable {
        public var version: String
        public var creator: Creator
        public var pages: [Page]?
        public var entries: [Entry]
        public var comment: String?

        public init(creator: Creator, entries: [Entry]) {
            self.version = "1.2"
            self.creator = creator
            self.entries = entries
        }
    }

    public struct Creator: Codable, Sendable, Equatable {
        public var name: String
        public var version: String
        public var comment: String?

        public init(name: String, version: String) {
            self.name = name
            self.version = version
        }
    }

    public struct Page: Codable, Sendable, Equatable {
        public var startedDateTime: String
        public var id: String
        public var title: String
    }

    public struct Header: Codable, Sendable, Equatable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public struct Cookie: Codable, Sendable, Equatable {
        public var name: String
        public var value: String
    }

    public struct PostData: Codable, Sendable, Equatable {
        public var mimeType: String
        public var text: String?

        public init(mimeType: String, text: String?) {
            self.mimeType = mimeType
            self.text = text
        }
    }

    public struct Request: Codable, Sendable, Equatable {
        public var method: String
        public var url: String
        public var httpVersion: String
        public var cookies: [Cookie]
        public var headers: [Header]
        public var queryString: [Header]
        public var postData: PostData?
        public var headersSize: Int
        public var bodySize: Int

        public init(method: String, url: String, httpVersion: String, headers: [Header], postData: PostData? = nil) {
            self.method = method
            self.url = url
            self.httpVersion = httpVersion
            self.cookies = []
            self.headers = headers
            self.queryString =
                URLComponents(string: url)?.queryItems?.map {
                    Header(name: $0.name, value: $0.value ?? "")
                } ?? []
            self.postData = postData
            self.headersSize = -1
            self.bodySize = postData?.text.map { $0.utf8.count } ?? 0
        }
    }

    public struct Response: Codable, Sendable, Equatable {
        public var status: Int
        public var statusText: String
        public var httpVersion: String
        public var cookies: [Cookie]
        public var headers: [Header]
        public var content: Content
        public var redirectURL: String
        public var headersSize: Int
        /// The body bytes that went out: fewer than the content's size when a fault cut the body.
        public var bodySize: Int

        public init(status: Int, statusText: String, httpVersion: String, headers: [Header], content: Content) {
            self.status = status
            self.statusText = statusText
            self.httpVersion = httpVersion
            self.cookies = []
            self.headers = headers
            self.content = content
            self.redirectURL = ""
            self.headersSize = -1
            self.bodySize = content.size
        }

        enum CodingKeys: String, CodingKey {
            case status, statusText, httpVersion, cookies, headers, content, redirectURL, headersSize, bodySize
        }

        /// As HAR 1.2 has it, except for a flow that failed before any answer (status 0): mitmproxy
        /// writes its `content` as `{}`, without the size and type every answer has. Such a flow answers
        /// nothing on replay, so its content is read as empty.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            status = try container.decode(Int.self, forKey: .status)
            statusText = try container.decode(String.self, forKey: .statusText)
            httpVersion = try container.decode(String.self, forKey: .httpVersion)
            cookies = try container.decode([Cookie].self, forKey: .cookies)
            headers = try container.decode([Header].self, forKey: .headers)
            redirectURL = try container.decode(String.self, forKey: .redirectURL)
            headersSize = try container.decode(Int.self, forKey: .headersSize)
            bodySize = try container.decode(Int.self, forKey: .bodySize)
            if status == 0 {
                let failed = try container.nestedContainer(keyedBy: Content.CodingKeys.self, forKey: .content)
                var content = Content(
                    size: try failed.decodeIfPresent(Int.self, forKey: .size) ?? 0,
                    mimeType: try failed.decodeIfPresent(String.self, forKey: .mimeType) ?? "")
                content.text = try failed.decodeIfPresent(String.self, forKey: .text)
                content.encoding = try failed.decodeIfPresent(String.self, forKey: .encoding)
                self.content = content
            } else {
                content = try container.decode(Content.self, forKey: .content)
            }
        }
    }

    /// A body: inline as `text` (base64 when `encoding` says so), or, PushHarness's extension, in a file
    /// beside the HAR named by its SHA-256 (`_file`), stored once however many entries share it.
    public struct Content: Codable, Sendable, Equatable {
        public var size: Int
        public var mimeType: String
        public var text: String?
        public var encoding: String?
        public var comment: String?
        /// `bodies/<sha256>`, relative to the cassette folder.
        public var file: String?
        /// The hex SHA-256 of the body's bytes.
        public var sha256: String?

        public init(size: Int, mimeType: String) {
            self.size = size
            self.mimeType = mimeType
        }

        enum CodingKeys: String, CodingKey {
            case size, mimeType, text, encoding, comment
            case file = "_file"
            case sha256 = "_sha256"
        }
    }

    /// HAR requires `send`, `wait` and `receive` (non-negative); the others are -1 or absent when they
    /// do not apply. `entry.time` is their sum.
    public struct Timings: Codable, Sendable, Equatable {
        public var blocked: Double?
        public var dns: Double?
        public var connect: Double?
        public var ssl: Double?
        public var send: Double
        public var wait: Double
        public var receive: Double

        public init(send: Double, wait: Double, receive: Double) {
            self.send = send
            self.wait = wait
            self.receive = receive
        }

        /// The entry's `time`: every timing that applies, added up (`ssl` is inside `connect`).
        public var total: Double {
            [blocked, dns, connect].compactMap { $0 }.filter { $0 >= 0 }.reduce(send + wait + receive, +)
        }
    }

    /// How a response ended early, on purpose: the fault that fired and the byte of the body it cut at.
    public struct Fault: Codable, Sendable, Equatable {
        /// The `kind` of a body cut short with no fault rule: the client went away, or the recording
        /// run ended mid-body.
        public static let connectionClosed = "connectionClosed"

        /// The fault's name (`reset`, `fin`, `stall`, …), as in harness.yml.
        public var kind: String
        /// Body bytes sent before the cut.
        public var atByte: Int
        /// How the connection ended: `FIN`, `RST` or `stall`.
        public var how: String
        /// The body's full length, had it not been cut.
        public var of: Int?

        public init(kind: String, atByte: Int, how: String, of: Int? = nil) {
            self.kind = kind
            self.atByte = atByte
            self.how = how
            self.of = of
        }
    }

    public struct Entry: Codable, Sendable, Equatable {
        public var startedDateTime: String
        public var time: Double
        public var request: Request
        public var response: Response
        public var cache: Cache
        public var timings: Timings
        public var serverIPAddress: String?
        /// The connection the exchange used, as an id unique within the archive.
        public var connection: String?
        public var comment: String?
        /// Which of the harness's services answered: `media`, `apns`, `parse`, `device`.
        public var service: String?
        /// The hop of the chain, such as `transfer→media`.
        public var link: String?
        /// Milliseconds from the cassette's start (the run's first step) to this request.
        public var offset: Double?
        /// Each body write as `[milliseconds after the response head, bytes]`: the pacing to replay.
        public var writes: [[Double]]?
        public var fault: Fault?
        /// Every fault rule that applied to the exchange, header changes included, as the timeline's
        /// `media.fault` event gave it (`fault`, and `status` or `by` where they apply).
        public var applied: [[String: String]]?
        /// HTTP/2 only: the stream the exchange used on its connection.
        public var h2: HTTP2?

        enum CodingKeys: String, CodingKey {
            case startedDateTime, time, request, response, cache, timings, serverIPAddress, connection, comment
            case service = "_service"
            case link = "_link"
            case offset = "_offset"
            case writes = "_writes"
            case fault = "_fault"
            case applied = "_applied"
            case h2 = "_h2"
        }

        public init(
            startedDateTime: String, request: Request, response: Response, timings: Timings
        ) {
            self.startedDateTime = startedDateTime
            self.time = timings.total
            self.request = request
            self.response = response
            self.cache = Cache()
            self.timings = timings
        }

        /// The entry without PushHarness's custom fields, as it must be read when another tool wrote it.
        var withoutCustomFields: Entry {
            var entry = self
            entry.service = nil
            entry.link = nil
            entry.offset = nil
            entry.writes = nil
            entry.fault = nil
            entry.applied = nil
            entry.h2 = nil
            entry.response.content.file = nil
            entry.response.content.sha256 = nil
            return entry
        }
    }

    /// What HAR cannot say about an HTTP/2 exchange: its stream.
    public struct HTTP2: Codable, Sendable, Equatable {
        public var streamId: Int

        public init(streamId: Int) { self.streamId = streamId }
    }

    /// Always `{}` here: the harness does not model a browser cache.
    public struct Cache: Codable, Sendable, Equatable {
        public init() {}
    }
}

extension HAR.Entry {
    /// The value of the first response header named `name` (case-insensitive).
    public func responseHeader(_ name: String) -> String? {
        response.headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The value of the first request header named `name` (case-insensitive).
    public func requestHeader(_ name: String) -> String? {
        request.headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}
