/// A problem the device simulator reports to the harness, worded for the user.
public struct DeviceError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
