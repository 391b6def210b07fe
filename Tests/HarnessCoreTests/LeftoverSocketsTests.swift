import Foundation
import Processes
import Testing

@testable import HarnessCore

#if canImport(Glibc)
import Glibc
#endif

/// A crashed run's device socket is removed by the next run; nothing else in the folder is touched.
@Suite struct LeftoverSocketsTests {
    /// Makes a Unix socket file at `path` the way the device does, and closes it without unlinking,
    /// as a process killed with SIGKILL leaves it.
    func leaveSocket(at path: String) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(bound == 0, "bind \(path): errno \(errno)")
    }

    /// The pid of a process that has exited and been reaped.
    func deadPid() throws -> pid_t {
        let ended = DispatchSemaphore(value: 0)
        let null = FileHandle.nullDevice.fileDescriptor
        let pid = try ProcessSpawning.spawn(
            "/bin/true", [], environment: [:], standardInput: null, standardOutput: null, standardError: null
        ) { _ in ended.signal() }
        ended.wait()
        return pid
    }

    @Test func socketsOfDeadRunsGoAndEverythingElseStays() throws {
        let directory = URL(fileURLWithPath: "/tmp/leftover-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let dead = try deadPid()
        let names = (
            dead: "harness-\(dead)-17.sock", live: "harness-\(getpid())-18.sock", file: "harness-\(dead)-19.sock",
            other: "other-\(dead)-20.sock"
        )
        try leaveSocket(at: directory.appendingPathComponent(names.dead).path)
        try leaveSocket(at: directory.appendingPathComponent(names.live).path)
        try leaveSocket(at: directory.appendingPathComponent(names.other).path)
        try Data("not a socket".utf8).write(to: directory.appendingPathComponent(names.file))

        #expect(LeftoverSockets.removeDead(in: directory) == [names.dead])
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
        #expect(left == [names.live, names.file, names.other])
    }

    @Test(
        arguments: [
            ("harness-42-7.sock", 42), ("harness-42.sock", nil), ("harness-x-7.sock", nil), ("harness-0-7.sock", nil),
            ("harness-42-7.sock.bak", nil), ("harness-42-7-9.sock", nil),
        ] as [(String, Int32?)])
    func onlyOurNamesHaveAnOwner(name: String, owner: Int32?) {
        #expect(LeftoverSockets.owner(ofName: name) == owner)
    }
}
