import HTTPServiceSupport

extension PortInUse {
    /// What to do about it, in harness.yml's words: the key that chose the port.
    /// The process holding the port is named where it can be known (``PortHolder``).
    public var inHarnessYAML: String {
        let holder = PortHolder.of(port: port).map { " (by \($0))" } ?? ""
        return "port \(port) is already in use\(holder); choose another with services.\(service).\(setting) in "
            + "harness.yml (0 picks a free port)"
    }
}

extension ServiceStack {
    /// Why the services could not start, for the user: a taken port names its harness.yml key.
    public static func describe(_ error: any Error) -> String {
        (error as? PortInUse)?.inHarnessYAML ?? "\(error)"
    }
}
