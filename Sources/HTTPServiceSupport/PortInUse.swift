import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A listener could not bind because its port is taken (`EADDRINUSE`). Says which service and which
/// setting of its configuration chose the port, in the library's own words; a harness names its own
/// file's key for it.
public struct PortInUse: Error, CustomStringConvertible, Equatable {
    public var port: Int
    /// `apns`, `media` or `parse`.
    public var service: String
    /// The configuration's property that chose the port: `port`, `controlPort`, `productionPort`, ...
    public var setting: String

    public init(port: Int, service: String, setting: String) {
        self.port = port
        self.service = service
        self.setting = setting
    }

    public var description: String { "port \(port) is already in use (the \(service) configuration's \(setting))" }

    /// The bind's error as ``PortInUse`` when the system said the address is in use; any other error as it is.
    public static func wrap(_ error: any Error, port: Int, service: String, setting: String) -> any Error {
        guard let error = error as? IOError, error.errnoCode == EADDRINUSE else { return error }
        return PortInUse(port: port, service: service, setting: setting)
    }
}
