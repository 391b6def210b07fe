import Foundation
import HTTPServiceSupport
import HarnessTimeline
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// A date format applied once a second: the `Date` header, the access log's time.
final class SecondCache: Sendable {
    private let format: @Sendable (Date) -> String
    private let cached = LockedState<(second: Int, text: String)>((-1, ""))

    init(_ format: @escaping @Sendable (Date) -> String) { self.format = format }

    func format(_ date: Date) -> String {
        let second = Int(date.timeIntervalSince1970.rounded(.down))
        return cached.withLock { cached in
            if cached.second != second { cached = (second, format(date)) }
            return cached.text
        }
    }
}

/// Each file's `ETag` and `Last-Modified`, made again only when its size, time or generation change.
final class ValidatorCache: Sendable {
    private struct Key: Hashable {
        var path: String
        var length: Int
        var modified: Double
        var generation: Int
    }

    private let cache = LockedState<[Key: (etag: String, lastModified: String)]>([:])

    func validators(of resource: MediaResource) -> (etag: String, lastModified: String) {
        let key = Key(
            path: resource.url.path, length: resource.length, modified: resource.modified.timeIntervalSince1970,
            generation: resource.generation)
        if let hit = cache.withLock({ $0[key] }) { return hit }
        let made = (resource.etag, resource.lastModified)
        cache.withLock { cache in
            // A served tree is small; should one grow past this, start over rather than grow forever.
            if cache.count >= 10_000 { cache.removeAll() }
            cache[key] = made
        }
        return made
    }
}

/// Request paths resolved to files under the root. A path's resolution (realpath, checked to be
/// under the root) is kept, so a later request for it costs one stat; the kept file is inside the
/// root whatever happens to symlinks afterwards, so nothing outside can be served.
final class PathResolver: Sendable {
    private let root: String
    private let resolved = LockedState<[String: String]>([:])

    init(root: String) { self.root = root }

    func resource(at path: String, generation: Int) -> MediaResource? {
        if let file = resolved.withLock({ $0[path] }), let resource = MediaResource(file: file, generation: generation)
        {
            return resource
        }
        guard let resource = MediaResource(root: root, path: path, generation: generation) else { return nil }
        resolved.withLock { resolved in
            if resolved.count >= 10_000 { resolved.removeAll() }
            resolved[path] = resource.url.path
        }
        return resource
    }
}
