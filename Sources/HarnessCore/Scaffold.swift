import Foundation

/// What `harness init` writes into a folder: a harness.yml with the silent push → background download
/// → local notification scenario and a variant that must fail, an app speaking the device protocol in
/// the language asked for, a file for it to download, and a CI workflow. A value: the command writes it.
public struct Scaffold: Sendable, Equatable {
    public enum Language: String, Sendable, CaseIterable {
        case python, shell
    }

    public struct File: Sendable, Equatable {
        /// Relative to the folder.
        public var path: String
        public var contents: Data
        public var executable: Bool
    }

    public let files: [File]

    /// - Parameter name: the app's name in harness.yml (letters, digits and `-`), also the last part of
    ///   its bundle id.
    public init(language: Language, name: String) throws(ScaffoldError) {
        guard let first = name.unicodeScalars.first, first.properties.isAlphabetic, first.isASCII, name.count <= 40,
            name.unicodeScalars.allSatisfy({
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-")
            })
        else {
            throw ScaffoldError(
                problem:
                    "--name takes a name of up to 40 letters, digits and '-', starting with a letter, not '\(name.prefix(60))'"
            )
        }
        let app: (path: String, command: String, broken: String, text: String)
        switch language {
        case .python:
            app = ("app.py", "[python3, app.py]", "[python3, app.py, --forget-notification]", Self.pythonApp)
        case .shell:
            app = ("app.sh", "[bash, app.sh]", "[bash, app.sh, --forget-notification]", Self.shellApp)
        }
        // The shell app keeps to the plain flow: a download longer than the push's time is Python's.
        let yml = Self.harnessYML(
            name: name, app: app.command, broken: app.broken, longDownloads: language == .python)
        files = [
            File(path: "harness.yml", contents: Data(yml.utf8), executable: false),
            File(path: app.path, contents: Data(app.text.utf8), executable: true),
            File(path: Self.download, contents: Self.downloadContents, executable: false),
            File(path: ".github/workflows/push-harness.yml", contents: Data(Self.workflow.utf8), executable: false),
        ]
    }

    /// The file the app downloads, under the media root.
    static let download = "media/daily/today.json"

    /// A few kilobytes, the same every time (the scenario checks its SHA-256).
    static var downloadContents: Data {
        let items = (1...64).map { "    {\"id\": \($0), \"title\": \"Story \($0)\", \"read\": false}" }
        return Data(("{\"date\": \"today\", \"stories\": [\n" + items.joined(separator: ",\n") + "\n]}\n").utf8)
    }

    /// The paths among `files` that `exists` says are there already: what `harness init` will not
    /// overwrite without `--force`.
    public func existing(_ exists: (String) -> Bool) -> [String] {
        files.map(\.path).filter(exists)
    }

    static func harnessYML(name: String, app: String, broken: String, longDownloads: Bool) -> String {
        let slow = longDownloads ? slowDownload(name: name) : ""
        return """
            # PushHarness: your app's silent push → background download → local notification, on this machine.
            # `harness run` runs the first scenario; `harness run \(name)-forgets-notification` the variant that
            # must fail. The keys are explained in PushHarness's docs/harness-yml.md.
            version: 1

            services:
              apns: {port: 0}          # FakeAPNs; 0 = a free port each run (the apps and backends are told it)
              parse: {port: 0}         # FakeParse, where the app saves its installation and the push is sent
              media:
                port: 0
                root: media            # what the app downloads, served as it would be by your server

            apps:
              \(name):                 # change command to run your own app; it must speak docs/device-protocol.md
                bundleId: com.example.\(name)
                command: \(app)
                backgroundModes: [remote-notification]
              \(name)-broken:          # the same app with a bug built in, for the variant below
                bundleId: com.example.\(name)
                command: \(broken)
                backgroundModes: [remote-notification]

            scenarios:
              silent-push-download:
                description: a silent push wakes the app, which downloads today's file in the background and says so
                steps:
                  - launch: \(name)
                  - waitFor: {event: parse.installation.saved, timeout: 30s}   # the app registered with Parse
                  - home: \(name)                                             # the user leaves the app
                  - waitFor: {event: device.app.state, where: {state: suspended}, timeout: 10s}
                  - push:                                                      # as your backend would send it
                      where: {deviceType: ios}
                      data: {content-available: 1, push_type: background, priority: 5}
                expect:
                  within: 30s
                  chain:                                                       # each after the one before
                    - apns.request.accepted: {pushType: background, priority: "5"}
                    - device.push.delivered: {wake: resumed}
                    - transfer.completed: {sha256: {sha256OfFixture: daily/today.json}}
                    - app.localNotification: {alertBody: "Today's stories are here"}
                    - app.fetchCompleted: {result: newData}
                  files:
                    - path: Library/Caches/today.json
                      sha256OfFixture: daily/today.json

            \(slow)  \(name)-forgets-notification:
                description: the same, with an app that forgets to tell the user; this one must fail
                steps:
                  - launch: \(name)-broken
                  - waitFor: {event: parse.installation.saved, timeout: 30s}
                  - home: \(name)-broken
                  - waitFor: {event: device.app.state, where: {state: suspended}, timeout: 10s}
                  - push: {where: {deviceType: ios}, data: {content-available: 1, push_type: background, priority: 5}}
                expect:
                  within: 10s
                  chain:
                    - transfer.completed: {sha256: {sha256OfFixture: daily/today.json}}
                    - app.localNotification: {alertBody: "Today's stories are here"}

            """
    }

    /// The scenario of a download longer than the push's background time.
    static func slowDownload(name: String) -> String {
        """
          slow-download:
            description: the download outlasts the push's background time; the app completes the push early and tells the user when the session wakes it
            media: {throttle: 400B/s}        # 3 KB take about 8 s
            device: {timeScale: 0.2}         # iOS's times five times shorter: the push's 30 s become 6 s
            steps:
              - launch: \(name)
              - waitFor: {event: parse.installation.saved, timeout: 30s}
              - home: \(name)
              - waitFor: {event: device.app.state, where: {state: suspended}, timeout: 10s}
              - push: {where: {deviceType: ios}, data: {content-available: 1, push_type: background, priority: 5}}
            expect:
              within: 30s
              chain:
                - device.push.delivered: {wake: resumed}
                - app.fetchCompleted: {result: noData}                     # in time, before the download ends
                - transfer.completed: {sha256: {sha256OfFixture: daily/today.json}}
                - app.localNotification: {alertBody: "Today's stories are here"}
              never:
                - device.watchdog.killed


        """
    }

    static let workflow = """
        # PushHarness in CI: the scenario on every push. It needs the harness binary on PATH: build it once
        # with PushHarness's `ci/install PREFIX` (one binary, everything inside), archive it
        # (tar -czf harness.tar.gz -C PREFIX/bin harness), publish the archive where this job can fetch it,
        # and set the repository variable PUSHHARNESS_URL to its address.
        name: push-harness
        on: [push, pull_request]
        jobs:
          scenarios:
            runs-on: ubuntu-24.04
            steps:
              - uses: actions/checkout@v4
              - name: Install PushHarness
                run: |
                  sudo apt-get update && sudo apt-get install -y libnghttp2-14 libsqlite3-0 python3
                  curl -fsSL "${{ vars.PUSHHARNESS_URL }}" | sudo tar -xz -C /usr/local/bin
                  harness doctor
              - name: Run the scenarios
                run: harness run silent-push-download
              - name: Keep the report
                if: always()
                uses: actions/upload-artifact@v4
                with:
                  name: push-harness-report
                  path: .harness/runs/

        """
}

/// An `init` that cannot be made as asked.
public struct ScaffoldError: Error, CustomStringConvertible, Equatable {
    public var problem: String
    public var description: String { problem }
}
