import Foundation

/// What `harness init` writes into a folder: a harness.yml with the silent push → background download
/// → local notification scenario and a variant that must fail, an app speaking the device protocol in
/// the language asked for, a file for it to download, and a CI workflow. A value: the command writes it.
public struct Scaffold: Sendable, Equatable {
    public enum Language: String, Sendable, CaseIterable {
        case python, shell, swift
    }

    public struct File: Sendable, Equatable {
        /// Relative to the folder.
        public var path: String
        public var contents: Data
        public var executable: Bool
    }

    public let files: [File]

    /// - Parameters:
    ///   - name: the app's name in harness.yml (letters, digits and `-`), also the last part of its
    ///     bundle id (and, in Swift, the package's and its executable's name).
    ///   - harnessPackage: where a Swift app's Package.swift finds PushHarness; needed for `.swift` only.
    public init(language: Language, name: String, harnessPackage: HarnessPackage? = nil) throws(ScaffoldError) {
        guard let first = name.unicodeScalars.first, first.properties.isAlphabetic, first.isASCII, name.count <= 40,
            name.unicodeScalars.allSatisfy({
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-")
            })
        else {
            throw .badName(String(name.prefix(60)))
        }
        let app: AppFiles
        switch language {
        case .python:
            app = AppFiles(
                files: [File(path: "app.py", contents: Data(Self.pythonApp.utf8), executable: true)],
                command: "[python3, app.py]", broken: "[python3, app.py, --forget-notification]",
                packages: "python3")
        case .shell:
            app = AppFiles(
                files: [File(path: "app.sh", contents: Data(Self.shellApp.utf8), executable: true)],
                command: "[bash, app.sh]", broken: "[bash, app.sh, --forget-notification]",
                packages: "socat curl")
        case .swift:
            guard let harnessPackage else { throw .noHarnessPackage }
            app = AppFiles(
                files: [
                    File(
                        path: "Package.swift",
                        contents: Data(Self.swiftPackage(name: name, harness: harnessPackage).utf8),
                        executable: false),
                    File(path: "Sources/\(name)/App.swift", contents: Data(Self.swiftApp.utf8), executable: false),
                ],
                command: "[.build/debug/\(name)]", broken: "[.build/debug/\(name), --forget-notification]",
                build: "[swift, build, --product, \(name)]", packages: "", swift: true)
        }
        // The shell and Swift apps keep to the plain flow: a download longer than the push's time is Python's.
        let yml = Self.harnessYML(name: name, app: app, longDownloads: language == .python)
        files =
            [File(path: "harness.yml", contents: Data(yml.utf8), executable: false)] + app.files + [
                File(path: Self.download, contents: Self.downloadContents, executable: false),
                File(
                    path: ".github/workflows/push-harness.yml", contents: Data(Self.workflow(for: app).utf8),
                    executable: false),
            ]
    }

    /// The app's own files and how harness.yml runs them.
    struct AppFiles {
        var files: [File]
        /// harness.yml's `command` for the app, and for its twin with the bug built in.
        var command: String
        var broken: String
        /// harness.yml's `build`, when the app is built before it runs.
        var build: String? = nil
        /// The Debian packages CI installs for it, beside the harness's own libraries.
        var packages: String
        /// Built with Swift in CI.
        var swift = false
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

    static func harnessYML(name: String, app: AppFiles, longDownloads: Bool) -> String {
        let slow = longDownloads ? slowDownload(name: name) : ""
        let build = app.build.map { "\n    build: \($0)   # run once, before the first launch" } ?? ""
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
                bundleId: com.example.\(name)\(build)
                command: \(app.command)
                backgroundModes: [remote-notification]
              \(name)-broken:          # the same app with a bug built in, for the variant below
                bundleId: com.example.\(name)\(build)
                command: \(app.broken)
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

    static func workflow(for app: AppFiles) -> String {
        let packages = (["libnghttp2-14", "libsqlite3-0"] + (app.packages.isEmpty ? [] : [app.packages]))
            .joined(separator: " ")
        let swift =
            app.swift
            ? """
                  # The app is a Swift package: harness run builds it. Package.swift must name PushHarness by a
                  # URL this job can clone (harness init --language swift --harness-package URL).
                  - uses: swift-actions/setup-swift@v2
                    with:
                      swift-version: "6.2"

            """ : ""
        return """
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
            \(swift)      - name: Install PushHarness
                    run: |
                      sudo apt-get update && sudo apt-get install -y \(packages)
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
}

/// An `init` that cannot be made as asked.
public enum ScaffoldError: Error, CustomStringConvertible, Equatable {
    /// `--name` is not a name harness.yml and a bundle id can take (its first 60 characters).
    case badName(String)
    /// `--language swift` without `--harness-package`, and no checkout this harness was built from.
    case noHarnessPackage
    /// `--harness-package` is empty, too long or has control characters.
    case unusableHarnessPackage
    /// `--harness-package` names a folder that is not a PushHarness checkout.
    case notACheckout(path: String)
    /// `--harness-package` given for an app in another language.
    case harnessPackageWithoutSwift

    public var description: String {
        switch self {
        case .badName(let name):
            "--name takes a name of up to 40 letters, digits and '-', starting with a letter, not '\(name)'"
        case .noHarnessPackage:
            "--language swift needs --harness-package: the PushHarness checkout this harness was built from "
                + "is not on this machine; name a checkout's folder or a git URL of PushHarness"
        case .unusableHarnessPackage:
            "--harness-package takes a folder or a git URL of up to 4,096 bytes without control characters"
        case .notACheckout(let path):
            "--harness-package \(path): not a PushHarness checkout (no Package.swift naming PushHarness with "
                + "Sources/DeviceClient beside it)"
        case .harnessPackageWithoutSwift:
            "--harness-package is for --language swift only"
        }
    }
}
