/// One process as Linux's `/proc/<pid>/stat` shows it: enough to follow its parents, to find its process
/// group, and to tell it from a later process that gets the same pid.
struct ProcessRecord: Sendable, Equatable {
    var pid: Int32
    var parent: Int32
    var group: Int32
    /// When it started, in clock ticks after boot: with the pid, it names one process for good.
    var started: UInt64
    /// Ended, and not reaped yet by its parent.
    var isZombie: Bool

    init(pid: Int32, parent: Int32, group: Int32, started: UInt64, isZombie: Bool = false) {
        self.pid = pid
        self.parent = parent
        self.group = group
        self.started = started
        self.isZombie = isZombie
    }

    /// Reads a `/proc/<pid>/stat` line: `pid (command) state parent group …`, the start time its 22nd field.
    /// The command may hold spaces and parentheses, so the fields are counted after its last `)`. Nil for
    /// anything else.
    init?(stat: String) {
        guard let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")"), open < close,
            let pid = stat[..<open].split(separator: " ").first.flatMap({ Int32($0) })
        else { return nil }
        // Field 3 (the state) is the first after the command: field n is at n - 3.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let parent = Int32(fields[1]), let group = Int32(fields[2]),
            let started = UInt64(fields[19])
        else { return nil }
        let state = fields[0]
        self.init(pid: pid, parent: parent, group: group, started: started, isZombie: state == "Z" || state == "X")
    }

    /// Whether `environment` (a `/proc/<pid>/environ`: `NAME=value` entries, each ended by a zero byte)
    /// holds `entry` exactly, not as the start of a longer value.
    static func environment(_ environment: [UInt8], carries entry: String) -> Bool {
        environment.split(separator: 0).contains { $0.elementsEqual(entry.utf8) }
    }
}
