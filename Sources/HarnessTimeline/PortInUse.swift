#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A listener could not bind because the port is taken; names the setting that chooses it.
public struct PortInUse: Error, CustomStringConvertible {
    public var port: Int
    public var setting: String

    public var description: String {
        "port \(port) is already in use; choose another with \(setting) in harness.yml (0 picks a free port)"
    }

    /// Turns an "address in use" error from a bind into ``PortInUse``; other errors pass through.
    public static func wrap(_ error: any Error, port: Int, setting: String) -> any Error {
        if "\(error)".contains("Address already in use") || "\(error)".contains("errno: \(EADDRINUSE)") {
            return PortInUse(port: port, setting: setting)
        }
        return error
    }
}
