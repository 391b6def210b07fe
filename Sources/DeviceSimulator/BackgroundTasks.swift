import DeviceProtocol

/// `beginBackgroundTask` for every app: the tasks each app has open, by identifier, with their names.
/// A value: the device runs the allowance's timers and tells the app; this says what is open.
struct BackgroundTasks {
    private var open: [String: [Int: String]] = [:]

    /// The app opens a task; refused when one with that identifier is open already.
    mutating func begin(_ bundleId: String, identifier: Int, name: String) throws {
        guard open[bundleId]?[identifier] == nil else {
            throw RPCError.refused("background task \(identifier) is already open")
        }
        open[bundleId, default: [:]][identifier] = name
    }

    /// The app ends a task: its name; refused when it is not open.
    mutating func end(_ bundleId: String, identifier: Int) throws -> String {
        guard let name = open[bundleId]?.removeValue(forKey: identifier) else {
            throw RPCError.refused("background task \(identifier) is not open (ended already, or never begun)")
        }
        return name
    }

    /// The watchdog closes a task the app did not end: its name, if it was still open.
    mutating func close(_ bundleId: String, identifier: Int) -> String? {
        open[bundleId]?.removeValue(forKey: identifier)
    }

    /// The name of an open task; nil when it is not open.
    func name(_ bundleId: String, identifier: Int) -> String? { open[bundleId]?[identifier] }

    /// The identifiers of the app's open tasks, in order.
    func identifiers(of bundleId: String) -> [Int] { (open[bundleId] ?? [:]).keys.sorted() }

    /// Whether the app has a task open (then it is not suspended).
    func hasOpen(_ bundleId: String) -> Bool { !(open[bundleId]?.isEmpty ?? true) }

    /// The app's process ended: its tasks went with it.
    mutating func forget(_ bundleId: String) { open[bundleId] = nil }
}
