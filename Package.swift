// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "PushHarness",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "harness", targets: ["HarnessCLI"]),
        .executable(name: "nasa-tv", targets: ["NASATV"]),
        .executable(name: "harness-fuzzer", targets: ["HarnessFuzzer"]),
        .library(name: "FakeAPNs", targets: ["FakeAPNs"]),
        .library(name: "MediaServer", targets: ["MediaServer"]),
        .library(name: "FakeParse", targets: ["FakeParse"]),
        .library(name: "DeviceSimulator", targets: ["DeviceSimulator"]),
        .library(name: "DeviceClient", targets: ["DeviceClient"]),
        .library(name: "HarnessCore", targets: ["HarnessCore"]),
        .library(name: "FaultProxy", targets: ["FaultProxy"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
    ],
    targets: [
        .target(
            name: "HarnessTimeline",
            dependencies: []
        ),
        .target(
            name: "HTTPServiceSupport",
            dependencies: [
                "HarnessTimeline",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // Any JSON value, for the device protocol, push payloads and the fault proxy's API alike.
        .target(
            name: "JSONValues",
            dependencies: []
        ),
        .target(
            name: "DeviceProtocol",
            dependencies: ["JSONValues"]
        ),
        // FakeAPNs's HTTP/2 on libnghttp2 (`apt-get install libnghttp2-dev`).
        .systemLibrary(
            name: "CNGHTTP2", pkgConfig: "libnghttp2", providers: [.apt(["libnghttp2-dev"])]),
        .target(
            name: "FakeAPNs",
            dependencies: [
                "CNGHTTP2",
                "Recording",
                "HarnessTimeline",
                "HTTPServiceSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                // The fuzzer's provider connection (FakeAPNs+Fuzzing) runs on an EmbeddedChannel.
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        .target(
            name: "MediaServer",
            dependencies: [
                "HarnessTimeline",
                "HTTPServiceSupport",
                "Recording",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "FakeParse",
            dependencies: [
                "ParseModel",
                "DeviceProtocol",
                "Recording",
                "HarnessTimeline",
                "HTTPServiceSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // Compiled in (ci/embed-dashboard writes DashboardFiles.swift): one binary, no resource bundle.
            exclude: ["Dashboard"]
        ),
        // Child processes: posix_spawn, process groups, an app's or backend's process and its output.
        .target(
            name: "Processes",
            dependencies: ["HarnessTimeline"]
        ),
        .target(
            name: "Backends",
            dependencies: [
                "Processes", "HarnessTimeline", "HTTPServiceSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        .target(
            name: "ParseModel",
            dependencies: ["DeviceProtocol", "HarnessTimeline"]
        ),
        .target(
            name: "Recording",
            dependencies: ["HarnessTimeline", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // Toxiproxy's toxics and the push channel's faults as values, with no server in them: the device side
        // and the network settings use them without the fault proxy.
        .target(
            name: "Toxics",
            dependencies: ["HarnessTimeline", "JSONValues"]
        ),
        .target(
            name: "FaultProxy",
            dependencies: [
                "Toxics",
                "JSONValues",
                "HarnessTimeline",
                "HTTPServiceSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "NetworkConditions",
            dependencies: ["Toxics", "HarnessTimeline"]
        ),
        .target(
            name: "PushChannel",
            dependencies: ["Recording", "DeviceProtocol", "HarnessTimeline", "NetworkConditions"]
        ),
        .target(
            name: "DeviceSimulator",
            dependencies: [
                "Processes",
                "Recording",
                "DeviceProtocol",
                "PushChannel",
                "HarnessTimeline",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "DeviceClient",
            dependencies: ["DeviceProtocol"]
        ),
        .target(
            name: "HarnessCore",
            dependencies: [
                "Backends",
                "Processes",
                "HarnessTimeline",
                "FakeAPNs",
                "MediaServer",
                "FakeParse",
                "DeviceSimulator",
                "DeviceProtocol",
                "PushChannel",
                "HTTPServiceSupport",
                "Recording",
                "FaultProxy",
                "Toxics",
                "NetworkConditions",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "HarnessCLI",
            dependencies: [
                "DeviceSimulator",
                "Processes",
                "FakeAPNs",
                "FakeParse",
                "FaultProxy",
                "NetworkConditions",
                "HarnessCore",
                "HarnessTimeline",
                "MediaServer",
                "Recording",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "NASATV",
            dependencies: ["DeviceClient"]
        ),
        .executableTarget(
            name: "HarnessFuzzer",
            dependencies: [
                "FakeAPNs", "MediaServer", "FakeParse", "FaultProxy", "DeviceProtocol", "HarnessCore", "Recording",
            ]
        ),
        .target(
            name: "TestSupport",
            dependencies: ["Processes"],
            path: "Tests/TestSupport"
        ),
        .testTarget(name: "HarnessTimelineTests", dependencies: ["HarnessTimeline"]),
        .testTarget(name: "ProcessesTests", dependencies: ["Processes"]),
        .testTarget(name: "RecordingTests", dependencies: ["Recording", "HarnessTimeline", "TestSupport"]),
        .testTarget(
            name: "FaultProxyTests", dependencies: ["FaultProxy", "Toxics", "HarnessTimeline", "TestSupport"]),
        .testTarget(name: "ToxicsTests", dependencies: ["Toxics"]),
        .testTarget(name: "NetworkConditionsTests", dependencies: ["NetworkConditions", "Toxics"]),
        .testTarget(name: "ParseModelTests", dependencies: ["ParseModel", "DeviceProtocol"]),
        .testTarget(name: "HTTPServiceSupportTests", dependencies: ["HTTPServiceSupport", "TestSupport"]),
        .testTarget(
            name: "FakeAPNsTests",
            dependencies: [
                "FakeAPNs", "HarnessTimeline", "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .testTarget(
            name: "BackendsTests",
            dependencies: ["Backends", "HarnessTimeline", "TestSupport"]
        ),
        .testTarget(
            name: "MediaServerTests",
            dependencies: [
                "MediaServer", "HarnessTimeline", "Recording", "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "FakeParseTests",
            dependencies: [
                "FakeParse", "ParseModel", "DeviceProtocol", "FakeAPNs", "HarnessTimeline", "HTTPServiceSupport",
                "TestSupport",
            ]
        ),
        .testTarget(
            name: "DeviceSimulatorTests",
            dependencies: [
                "DeviceSimulator", "DeviceProtocol", "HarnessTimeline", "MediaServer", "PushChannel", "TestSupport",
                "NetworkConditions",
            ]
        ),
        .testTarget(
            name: "HarnessCoreTests",
            dependencies: [
                "Backends", "HarnessCore", "HarnessTimeline", "NetworkConditions", "DeviceSimulator", "TestSupport",
                "FakeAPNs", "Recording",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["TestSupport", "HarnessTimeline", .product(name: "Crypto", package: "swift-crypto")]
        ),
    ]
)

// Our own code builds without warnings: a warning in any of our targets fails the build (and so `ci/test`).
// Dependencies keep their own settings.
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [.treatAllWarnings(as: .error)]
}
