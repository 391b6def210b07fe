import CNGHTTP2

/// The libnghttp2 this process loaded, as `harness doctor` reports it.
public enum NGHTTP2Library {
    /// Its version, such as `1.52.0`.
    public static var version: String {
        guard let info = nghttp2_version(0), let text = info.pointee.version_str else { return "unknown" }
        return String(cString: text)
    }
}
