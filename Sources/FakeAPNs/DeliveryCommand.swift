import Foundation
import HarnessTimeline
import NIOPosix

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

    /// The most output of one command kept for its event.
    static let outputLimit = 2000
    /// How long one command may run before it is killed.
    static let timeout: Duration = .seconds(60)

    /// - Parameter folder: where the `.apns` files are written.
    public init(template: [String], folder: URL, timeline: Timeline) {
        self.template = template
        self.folder = folder
        self.timeline = timeline
        (queue, waiting) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(10_000))
    }

    /// Queues a delivery; called by the gateway as it delivers.
    func deliver(_ notification: AcceptedNotification) {
        waiting.yield(notification)
    }

    /// Ends the queue: ``run()`` returns once what is queued has run.
    func finish() { waiting.finish() }

    /// Runs each queued delivery's command in turn until ``finish()`` or cancellation.
    func run() async {
        for await notification in queue {
            if Task.isCancelled { return }
            let topic = notification.topic
            let name = "\(notification.apnsId).apns"
            let file = folder.appendingPathComponent(name)
            var attributes: EventAttributes = [
                "apnsId": notification.apnsId, "deviceToken": notification.deviceToken, "topic": topic,
            ]
            do {
                let contents = try SimulatorPushFile.contents(payload: Data(notification.payload.utf8), topic: topic)
                let arguments = SimulatorPushFile.arguments(
                    template, file: file.path, topic: topic, token: notification.deviceToken)
                let folder = folder
                let (status, output) = try await NIOThreadPool.singleton.runIfActive {
                    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                    try contents.write(to: file)
                    return try Self.execute(arguments)
                }
                attributes.merge(["status": status, "output": String(output.prefix(Self.outputLimit))])
            } catch {
                attributes.merge(["status": "not run", "output": "\(error)"])
            }
            timeline.publish(.apnsDeliveryCommand, source: "apns", attributes)
        }
    }

    /// Runs `arguments` (a program on PATH, or a path) to its end; its exit status in words and what it
    /// printed, both streams together. Blocking: called on NIO's blocking-I/O threads.
    private static func execute(_ arguments: [String]) throws -> (String, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let killer = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(Int(timeout.components.seconds)), execute: killer)
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        killer.cancel()
        let status =
            process.terminationReason == .uncaughtSignal
            ? "killed by signal \(process.terminationStatus)" : "exited with status \(process.terminationStatus)"
        return (status, String(decoding: output, as: UTF8.self))
    }
}

/// What `xcrun simctl push` reads: the notification's payload, a JSON object holding `aps`, with the
/// app's bundle id under `"Simulator Target Bundle"` (Xcode 11.4's release notes). Values.
public enum SimulatorPushFile {
    /// Why a payload cannot be such a file.
    public struct Unusable: Error, CustomStringConvertible, Equatable {
        public var description: String
    }

    public static func contents(payload: Data, topic: String) throws -> Data {
        guard var object = try? JSONSerialization.jsonObject(with: payload) as? [String: Any] else {
            throw Unusable(description: "the payload is not a JSON object")
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
