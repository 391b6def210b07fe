import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the fault proxy takes as a proxy's name and addresses, and which proxies would relay to one
/// another in a circle: pure rules, checked when a proxy is created or changed.
public enum ProxyRules {
    /// A name is a path segment of the API (`/proxies/{name}`), used as it is: ASCII letters, digits and
    /// the characters a URL path segment carries without percent-encoding (`-._~:@!$&'()*+,;=`), 1 to 200
    /// bytes, not `.` or `..` (which clients and servers resolve away). Nothing else can be created, so
    /// every proxy that exists can be read, changed and deleted.
    package static func nameProblem(_ name: String) -> String? {
        guard !name.isEmpty else { return "missing required field: name" }
        guard name.utf8.count <= 200 else { return "bad request body: name must be at most 200 bytes" }
        let allowed = name.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || nameSymbols.contains($0))
        }
        guard allowed, name != ".", name != ".." else {
            return
                "bad request body: name \(Toxic.quoted(String(name.prefix(100)))) must be letters, digits and -._~:@!$&'()*+,;= (not . or ..), so that /proxies/{name} reaches it"
        }
        return nil
    }

    private static let nameSymbols = Set("-._~:@!$&'()*+,;=".unicodeScalars)

    /// `host:port` as Toxiproxy writes `listen` and `upstream`: the host an IPv4 address, an IPv6
    /// address in brackets (`[::1]:80`), or a DNS name (ASCII letters, digits, `-` and `_` in labels of
    /// 1 to 63, 253 bytes in all); empty means `0.0.0.0` for `listen` and `127.0.0.1` for `upstream`.
    /// The port is 1 to 65535 (0 too for `listen`: any free port).
    package static func hostPort(_ text: String, field: String) throws(ToxiproxyError) -> (host: String, port: Int) {
        let refusal = ToxiproxyError.badBody(
            "\(field) must be host:port, not \(Toxic.quoted(String(text.prefix(100))))")
        guard let colon = text.lastIndex(of: ":") else { throw refusal }
        var host = String(text[..<colon])
        let portText = text[text.index(after: colon)...]
        guard !portText.isEmpty, portText.utf8.count <= 5, portText.allSatisfy({ ("0"..."9").contains($0) }),
            let port = Int(portText), (field == "listen" ? 0 : 1)...65535 ~= port
        else { throw refusal }
        if host.hasPrefix("[") || host.hasSuffix("]") {
            guard host.hasPrefix("["), host.hasSuffix("]"), host.count > 2 else { throw refusal }
            host = String(host.dropFirst().dropLast())
            guard isIPv6(host) else { throw refusal }
            return (host, port)
        }
        if host.isEmpty { return (field == "listen" ? "0.0.0.0" : "127.0.0.1", port) }
        guard isIPv4(host) || isDNSName(host) else { throw refusal }
        return (host, port)
    }

    package static func isIPv4(_ host: String) -> Bool {
        var address = in_addr()
        return inet_pton(AF_INET, host, &address) == 1
    }

    package static func isIPv6(_ host: String) -> Bool {
        var address = in6_addr()
        return inet_pton(AF_INET6, host, &address) == 1
    }

    /// A host name: labels of letters, digits, `-` and `_`, the last not all digits (RFC 3696: `127.1`,
    /// `2130706433` and `0x7f.1` are addresses to the resolver, which no rule here would see as one).
    package static func isDNSName(_ host: String) -> Bool {
        // A fully qualified name may end with its root's dot.
        let name = host.hasSuffix(".") ? host.dropLast() : Substring(host)
        guard name.utf8.count <= 253 else { return false }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        if let last = labels.last, last.allSatisfy({ ("0"..."9").contains($0) }) { return false }
        if let last = labels.last, last.lowercased().hasPrefix("0x") { return false }
        return labels.allSatisfy { label in
            (1...63).contains(label.utf8.count) && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.unicodeScalars.allSatisfy {
                    $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_")
                }
        }
    }

    // MARK: Loops

    /// A proxy as the loop rule sees it: where it listens and where it relays.
    package struct Hop {
        var name: String
        var listen: (host: String, port: Int)
        var upstream: (host: String, port: Int)

        package init(name: String, listen: (host: String, port: Int), upstream: (host: String, port: Int)) {
            self.name = name
            self.listen = listen
            self.upstream = upstream
        }
    }

    /// The names of the proxies a connection to `start`'s listener goes through before it comes back
    /// to a listener it has passed (`start` first, then each proxy whose listener the one before relays
    /// to), or nil when the chain leaves the fault proxy. `local` are the addresses of this machine
    /// besides loopback (an upstream naming one of them reaches a listener on `0.0.0.0`).
    package static func loop(from start: Hop, among others: [Hop], local: Set<String> = []) -> [String]? {
        var path = [start.name]
        var current = start
        let hops = [start] + others.filter { $0.name != start.name }
        while let next = hops.first(where: { reaches(current.upstream, $0.listen, local: local) }) {
            if path.contains(next.name) {
                return path + [next.name]
            }
            path.append(next.name)
            current = next
        }
        return nil
    }

    /// Whether a connection to `upstream` arrives at a listener bound to `listen`. Port 0 is a listener
    /// not bound yet, which nothing reaches.
    package static func reaches(
        _ upstream: (host: String, port: Int), _ listen: (host: String, port: Int), local: Set<String>
    )
        -> Bool
    {
        guard listen.port != 0, upstream.port == listen.port else { return false }
        let target = canonical(upstream.host)
        let bound = canonical(listen.host)
        if isWildcard(bound) { return isLoopback(target) || isWildcard(target) || local.contains(target) }
        if isLoopback(bound) && isLoopback(target) {
            // localhost reaches 127.0.0.1 and ::1 alike; other 127.x addresses only themselves.
            return target == bound || target == "localhost" || bound == "localhost"
                || (isWildcard(target) && bound == "127.0.0.1")
        }
        return target == bound || (isWildcard(target) && bound == "127.0.0.1")
    }

    /// One spelling of each host: names lowercased without their root's dot, IPv6 addresses as
    /// `inet_ntop` writes them, an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) as its IPv4 address.
    package static func canonical(_ host: String) -> String {
        var address = in6_addr()
        if inet_pton(AF_INET6, host, &address) == 1 {
            let bytes = withUnsafeBytes(of: &address) { Array($0) }
            if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
                return bytes[12...].map(String.init).joined(separator: ".")
            }
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            guard inet_ntop(AF_INET6, &address, &text, socklen_t(text.count)) != nil else { return host }
            return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        let lowered = host.lowercased()
        return lowered.hasSuffix(".") ? String(lowered.dropLast()) : lowered
    }

    private static func isWildcard(_ host: String) -> Bool { host == "0.0.0.0" || host == "::" }

    private static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || (isIPv4(host) && host.hasPrefix("127."))
    }

    /// The connections one proxy keeps open at once: a loop through a relay outside the fault proxy
    /// (which no rule can see) stops there instead of taking every descriptor of the process.
    public static let maxConnectionsPerProxy = 1_024

    /// The connections all proxies keep open at once, from the process's limit on descriptors (each
    /// connection takes two): half of what is left after 256 for everything else, at least 64.
    package static func maxConnectionsInAll(descriptorLimit: Int) -> Int {
        max(64, (descriptorLimit - 256) / 2 / 2)
    }

    /// This process's soft limit on open descriptors (`RLIMIT_NOFILE`).
    package static func descriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1_024 }
        return Int(clamping: min(limit.rlim_cur, UInt(Int.max / 4)))
    }
}

/// This machine's own addresses besides loopback (from `getifaddrs`), and its host name: an upstream
/// naming one of them reaches a proxy listening on `0.0.0.0` or `::`.
package enum LocalAddresses {
    package static func current() -> Set<String> {
        var names: Set<String> = []
        var buffer = [CChar](repeating: 0, count: 256)
        if gethostname(&buffer, buffer.count - 1) == 0 {
            names.insert(
                String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).lowercased())
        }
        var first: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&first) == 0 else { return names }
        defer { freeifaddrs(first) }
        var entry = first
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            guard let address = current.pointee.ifa_addr else { continue }
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            let family = Int32(address.pointee.sa_family)
            guard family == AF_INET || family == AF_INET6 else { continue }
            let length = socklen_t(family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
            guard getnameinfo(address, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else {
                continue
            }
            let text = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            // A link-local IPv6 address carries its interface (`fe80::1%eth0`), which no upstream names.
            names.insert(String(text.prefix { $0 != "%" }).lowercased())
        }
        return names
    }
}

/// A proxy's clients against its cap: a client over it is refused, and the first refusal after the
/// proxy had room is the one the timeline hears of.
package struct ConnectionCap {
    package let limit: Int
    package private(set) var open = 0
    private var refusing = false

    package init(limit: Int) { self.limit = limit }

    package mutating func admit() -> (admitted: Bool, firstRefusal: Bool) {
        guard open < limit else {
            defer { refusing = true }
            return (false, !refusing)
        }
        open += 1
        refusing = false
        return (true, false)
    }

    package mutating func release() { open = max(0, open - 1) }
}
