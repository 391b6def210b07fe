import DeviceSimulator
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A child gets the pipe ends it is given as its standard streams, and no other pipe of ours.
@Suite struct ProcessSpawningTests {
    @Test func bothEndsOfAPipeAreCloseOnExec() {
        let pipe = ProcessSpawning.pipe()
        for handle in [pipe.fileHandleForReading, pipe.fileHandleForWriting] {
            #expect(fcntl(handle.fileDescriptor, F_GETFD) & FD_CLOEXEC != 0)
        }
    }

    /// The child still writes to the pipe it was given as its output, and only it holds the write end.
    @Test func theChildGetsItsOwnEnds() throws {
        let pipe = ProcessSpawning.pipe()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "echo hello"]
        process.standardOutput = pipe
        try ProcessSpawning.serialized { try process.run() }
        try pipe.fileHandleForWriting.close()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        #expect(String(decoding: output, as: UTF8.self) == "hello\n")
    }
}
