import Foundation

/// The PushHarness checkout this harness was built from, while it is still on this machine: where
/// `harness init --language swift` points the app's Package.swift when `--harness-package` is not
/// given. A binary copied to another machine has none.
public enum HarnessCheckout {
    /// The checkout holding this file when it was compiled, if it is still a PushHarness checkout.
    public static func builtFrom(_ source: String = #filePath) -> URL? {
        // Sources/HarnessCore/HarnessCheckout.swift: three levels below the package's folder.
        let root = URL(fileURLWithPath: source).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return isCheckout(root) ? root : nil
    }

    /// A folder whose Package.swift is PushHarness's, with DeviceClient's sources beside it.
    public static func isCheckout(_ folder: URL) -> Bool {
        // An unreadable or missing manifest is no checkout: `contents` says nil for both.
        guard let manifest = FileManager.default.contents(atPath: folder.appendingPathComponent("Package.swift").path)
        else { return false }
        var isFolder: ObjCBool = false
        return String(decoding: manifest, as: UTF8.self).contains("name: \"PushHarness\"")
            && FileManager.default.fileExists(
                atPath: folder.appendingPathComponent("Sources/DeviceClient").path, isDirectory: &isFolder)
            && isFolder.boolValue
    }
}
