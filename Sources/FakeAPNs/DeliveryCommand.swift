import Foundation
import HarnessTimeline
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// `deliveryCommand`: each notification FakeAPNs delivers to a device registered through the control
/// API (a device no simulated phone holds) is written as a file in the format `xcrun simctl push`
/// reads, and a command the user gives is run with it, such as `xcrun simctl push booted {topic}
/// {file}` on a Mac with Apple's Simulator. Its exit status and output go on the timeline
/// (`apns.delivery.command`). One command at a time, in delivery order, on NIO's blocking-I/O threads,
/// by the one task ``run()`` is: the server's own.
public final class DeliveryCommand: Sendable {
    /// The command and its arguments, `{file}`, `{topic}` and `{token}` filled in per notification.
    public let template: [String]
    private let folder: URL
    private let timeline: Timeline
    private let queue: AsyncStream<AcceptedNotification>
    private let waiting: AsyncStream<AcceptedNotification>.Continuation
    /// Set once the server stops: what is still queued is said, not run.
    private let stopping = LockedState(false)
    /// The process group of the command running now, for a stop to end it.
    private let running = LockedState<pid_t?>(nil)

    /// The most output of one command kept for its event.
    static let outputLimit = 2000
    /// How long one command may run before its process group is killed.
    static let timeout: Duration = .seconds(60)
    /// The most deliveries waiting for their command; one more is said, not run.
    static let queueLimit = 10_000

    /// - Parameter folder: where the `.apns` files are written.
    public init(template: [String], folder: URL, timeline: Timeline) {
        self.template = template
        self.folder = folder
        self.timeline = timeline
        (queue, waiting) = AsyncStream.makeStream(bufferingPolicy: .bufferingOldest(Self.queueLimit))
    }

    /// Queues a delivery; called by the gateway as it delivers.
    func deliver(_ notification: AcceptedNotification) {
        if case .dropped = waiting.yield(notification) {
            publish(
                notification, status: "not run", output: "\(Self.queueLimit) deliveries were waiting for the command")
        }
    }

    /// Ends the queue: ``run()`` says what is left, without running it, and returns.
    func finish() {
        stopping.withLock { $0 = true }
        waiting.finish()
    }

    private func publish(_ notification: AcceptedNotification, status: String, output: String) {
        timeline.publish(
            .apnsDeliveryCommand, source: "apns",
            [
                "apnsId": notification.apnsId, "deviceToken": notification.deviceToken, "topic": notification.topic,
                "status": status, "output": String(output.prefix(Self.outputLimit)),
            ])
    }

    /// Runs each queued delivery's command in turn, on a thread of its own (a command may take a
    /// minute: NIO's shared blocking pool is not held), until ``finish()``; cancelled, the running
    /// command's process group is killed.
    func run() async {
        let thread = NIOThreadPool(numberOfThreads: 1)
        thread.start()
        defer { thread.shutdownGracefully { _ in } }
        for await notification in queue {
            if stopping.withLock({ $0 }) || Task.isCancelled {
                publish(notification, status: "not run", output: "the server stopped first")
                continue
            }
            let file = folder.appendingPathComponent("\(notification.apnsId).apns")
            do {
                let contents = try SimulatorPushFile.contents(
                    payload: Data(notification.payload.utf8), topic: notification.topic)
                let arguments = SimulatorPushFile.arguments(
                    template, file: file.path, topic: notification.topic, token: notification.deviceToken)
                let folder = folder
                let running = running
                let (status, output) = try await withTaskCancellationHandler {
                    try await thread.runIfActive {
                        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                        try contents.write(to: file)
                        return try CommandRun.execute(arguments, timeout: Self.timeout, keep: Self.outputLimit) {
                            group in running.withLock { $0 = group }
                        }
                    }
                } onCancel: {
                    if let group = running.withLock({ $0 }) { kill(-group, SIGKILL) }
                }
                running.withLock { $0 = nil }
                publish(notification, status: status, output: output)
            } catch {
                publish(notification, status: "not run", output: "\(error)")
            }
        }
    }
}

/// One command run to its end without Foundation's `Process` (which can crash past about 1,350 open
/// descriptors, as a busy FakeAPNs has): `posix_spawnp` in a process group of its own, standard input
/// from /dev/null, both output streams into one pipe of which the first `keep` bytes are kept, and the
/// whole group killed (SIGKILL) past `timeout`. Blocking: run on a thread of its own.
enum CommandRun {
    enum Failure: Error, CustomStringConvertible {
        case emptyCommand
        /// `pipe2` failed (its errno).
        case noPipe(Int32)
        /// `posix_spawnp` could not start the program (its error number).
        case cannotStart(String, Int32)

        var description: String {
            switch self {
            case .emptyCommand: "the command is empty"
            case .noPipe(let code): "no pipe: \(String(cString: strerror(code)))"
            case .cannotStart(let program, let code): "\(program) cannot be started: \(String(cString: strerror(code)))"
            }
        }
    }

    /// - Parameter started: told the process group once the command runs.
    static func execute(_ arguments: [String], timeout: Duration, keep: Int, started: (pid_t) -> Void) throws -> (
        String, String
    ) {
        guard let program = arguments.first else { throw Failure.emptyCommand }
        var pipe: [Int32] = [0, 0]
        // Made close-on-exec at once: a child another thread starts meanwhile must not hold its write end.
        guard systemPipe2(&pipe, O_CLOEXEC) == 0 else {
            throw Failure.noPipe(errno)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var argv = arguments.map { strdup($0) }
        defer { argv.forEach { free($0) } }
        argv.append(nil)
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, program, &actions, &attributes, argv, environ)
        close(pipe[1])
        defer { close(pipe[0]) }
        guard spawned == 0 else {
            throw Failure.cannotStart(program, spawned)
        }
        started(pid)
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var timedOut = false
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else {
                timedOut = true
                break
            }
            var poller = pollfd(fd: pipe[0], events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(min(left.components.seconds * 1000 + 1, 60_000))
            let ready = poll(&poller, 1, milliseconds)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { continue }
            let count = read(pipe[0], &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            if output.count < keep { output.append(contentsOf: buffer[0..<min(count, keep - output.count)]) }
        }
        if timedOut { kill(-pid, SIGKILL) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let signal = status & 0x7f
        let said =
            timedOut
            ? "killed after \(timeout)"
            : signal == 0 ? "exited with status \((status >> 8) & 0xff)" : "killed by signal \(signal)"
        return (said, String(decoding: output, as: UTF8.self))
    }
}

/// What `xcrun simctl push` reads: the notification's payload, a JSON object holding `aps`, with the
/// app's bundle id under `"Simulator Target Bundle"` (Xcode 11.4's release notes). Values.
public enum SimulatorPushFile {
    /// Why a payload cannot be such a file.
    public enum Unusable: Error, CustomStringConvertible, Equatable {
        /// The payload does not decode as a JSON object.
        case notAnObject

        public var description: String { "the payload is not a JSON object" }
    }

    public static func contents(payload: Data, topic: String) throws -> Data {
        guard var object = try? JSONSerialization.jsonObject(with: payload) as? [String: Any] else {
            throw Unusable.notAnObject
        }
        object["Simulator Target Bundle"] = topic
        return try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }

    /// `template` with `{file}`, `{topic}` and `{token}` replaced wherever they occur.
    public static func arguments(_ template: [String], file: String, topic: String, token: String) -> [String] {
        template.map {
            $0.replacingOccurrences(of: "{file}", with: file).replacingOccurrences(of: "{topic}", with: topic)
                .replacingOccurrences(of: "{token}", with: token)
        }
    }
}

/// glibc's `pipe2`, which Swift's Glibc module does not bring in.
@_silgen_name("pipe2")
private func systemPipe2(_ descriptors: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32
