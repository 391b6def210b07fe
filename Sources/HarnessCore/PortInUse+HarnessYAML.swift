import HTTPServiceSupport
import NIOPosix

extension PortInUse {
    /// What to do about it, in harness.yml's words: the key that chose the port, and the process
    /// holding it when that can be known (``PortHolder``, looked for on NIO's blocking-I/O threads: it
    /// reads /proc).
    public func inHarnessYAML() async -> String {
        let port = port
        let holder = try? await NIOThreadPool.singleton.runIfActive { PortHolder.of(port: port) }
        return described(holder: holder ?? nil)
    }

    /// The words, with the process holding the port when known.
    func described(holder: PortHolder?) -> String {
        "port \(port) is already in use\(holder.map { " (by \($0))" } ?? ""); choose another with "
            + "services.\(service).\(setting) in harness.yml (0 picks a free port)"
    }
}

extension ServiceStack {
    /// Why the services could not start, for the user: a taken port names its harness.yml key and,
    /// where it can be known, the process holding it.
    public static func describe(_ error: any Error) async -> String {
        if let taken = error as? PortInUse { return await taken.inHarnessYAML() }
        return "\(error)"
    }
}
