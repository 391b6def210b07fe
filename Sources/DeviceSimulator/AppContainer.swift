import DeviceProtocol
import Foundation

/// An app's sandbox on the host: `Library/Caches`, `Documents` and `tmp`, kept across relaunches of
/// one run so that what a background launch stored is there for the next.
struct AppContainer {
    let paths: ContainerPaths

    init(root: URL, bundleId: String) throws {
        let home = root.appendingPathComponent("containers").appendingPathComponent(bundleId)
        paths = ContainerPaths(
            home: home.path,
            caches: home.appendingPathComponent("Library/Caches").path,
            documents: home.appendingPathComponent("Documents").path,
            tmp: home.appendingPathComponent("tmp").path)
        for folder in [paths.caches, paths.documents, paths.tmp] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
    }

    /// A new name for a finished download, as nsurlsessiond's `CFNetworkDownload_XXXXXX.tmp`.
    func temporaryDownloadURL() -> URL {
        let suffix = UUID().uuidString.prefix(6)
        return URL(fileURLWithPath: paths.tmp).appendingPathComponent("CFNetworkDownload_\(suffix).tmp")
    }
}
