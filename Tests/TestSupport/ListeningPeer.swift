import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A server nobody here wrote (nginx from Debian, mitmproxy from PyPI), run for one test on a free
/// loopback port, waited for by the line it prints once it listens, and stopped with SIGTERM or SIGINT.
public final class ListeningPeer: Sendable {
    public let process: RunningChild
    public let port: Int
    public var url: String { "http://127.0.0.1:\(port)" }

    private init(process: RunningChild, port: Int) {
        self.process = process
        self.port = port
    }

    /// Starts `command(port)` on a free port until it prints `ready`; another port if that one was
    /// taken in between (the process exits instead).
    static func start(
        _ what: String, ready: String, environment: [String: String] = [:],
        command: (Int) throws -> (String, [String])
    ) async throws -> ListeningPeer {
        var output = ""
        for _ in 0..<5 {
            let port = try freePort()
            let (executable, arguments) = try command(port)
            let process = try RunningChild(executable, arguments, environment: environment)
            if await process.waitForLine(containing: ready, timeout: .seconds(60)) != nil {
                return ListeningPeer(process: process, port: port)
            }
            output = process.output
            process.send(SIGKILL)
            _ = await process.waitForExit()
        }
        throw PeerDidNotStart(what: what, output: output)
    }

    /// nginx serving `root` with its defaults (ETags, ranges, keep-alive), in the foreground and in one
    /// process (no master), so that whatever ends it ends all of it.
    public static func nginx(root: URL) async throws -> ListeningPeer {
        let work = try PackagePaths.temporaryDirectory("nginx")
        // nginx's workers may run as another user: they must be able to read the files.
        for url in [work, root] { chmod(url.path, 0o755) }
        for name in try FileManager.default.contentsOfDirectory(atPath: root.path) {
            chmod(root.appendingPathComponent(name).path, 0o755)
        }
        // nginx reports its limits once its sockets are bound (a taken port ends it before that).
        return try await start("nginx", ready: "getrlimit(RLIMIT_NOFILE)") { port in
            let conf = work.appendingPathComponent("nginx-\(port).conf")
            let temp = work.path
            try """
            daemon off;
            master_process off;
            pid \(temp)/nginx-\(port).pid;
            error_log stderr notice;
            events { worker_connections 256; }
            http {
                access_log off;
                types { image/jpeg jpg; video/mp4 mp4; text/plain txt; }
                client_body_temp_path \(temp); proxy_temp_path \(temp); fastcgi_temp_path \(temp);
                uwsgi_temp_path \(temp); scgi_temp_path \(temp);
                server { listen 127.0.0.1:\(port); root \(root.path); }
            }
            """.write(to: conf, atomically: true, encoding: .utf8)
            return (PackagePaths.python, ["-c", unblockingSignals, "/usr/sbin/nginx", "-c", conf.path, "-p", temp])
        }
    }

    /// mitmproxy's `mitmdump` as a reverse proxy in front of `upstream`, writing every flow as a HAR to
    /// `har` when it exits.
    /// - Parameter options: more `--set` options, such as `connection_strategy=lazy` (the upstream is
    ///   dialled once a request comes, so one that cannot be reached makes a failed flow).
    public static func mitmdump(reverseTo upstream: String, har: URL, options: [String] = []) async throws
        -> ListeningPeer
    {
        let executable = PackagePaths.root.appendingPathComponent(".venv-mitmproxy/bin/mitmdump").path
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw PeerDidNotStart(what: "mitmdump", output: "no \(executable): ci/test installs mitmproxy there")
        }
        // Python buffers a pipe's output: unbuffered, the line that says it listens arrives at once.
        let python = PackagePaths.root.appendingPathComponent(".venv-mitmproxy/bin/python").path
        return try await start("mitmdump", ready: "listening at", environment: ["PYTHONUNBUFFERED": "1"]) { port in
            (
                python,
                [
                    "-c", unblockingSignals, executable, "--mode", "reverse:\(upstream)", "--listen-host", "127.0.0.1",
                    "-p",
                    "\(port)", "--set",
                    "hardump=\(har.path)", "--set", "confdir=\(har.deletingLastPathComponent().path)/mitmproxy-conf",
                ] + options.flatMap { ["--set", $0] }
            )
        }
    }

    /// Python that clears the signal mask and becomes the program in its arguments. The test runner's
    /// threads may have signals blocked, and a child keeps the mask it was started with: mitmdump would
    /// then never see the SIGTERM that makes it write its HAR, nor a one-process nginx its SIGTERM.
    static let unblockingSignals =
        "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])"

    /// Stops the peer with `signal` and returns its exit status; SIGKILL after a minute, if it has not
    /// gone (then the status is that of the kill).
    public func stop(_ signal: Int32 = SIGTERM) async -> Int32 {
        process.send(signal)
        let process = process
        do {
            return try await withDeadline(.seconds(60), "\(process.pid) to exit") { await process.waitForExit() }
        } catch {
            process.send(SIGKILL)
            return await process.waitForExit()
        }
    }

    public struct PeerDidNotStart: Error, CustomStringConvertible {
        var what: String
        var output: String
        public var description: String { "\(what) did not start:\n\(output)" }
    }

    /// A port nothing listens on now.
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw PeerDidNotStart(what: "a free port", output: "bind failed: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
