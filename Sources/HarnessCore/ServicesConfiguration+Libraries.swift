import DeviceSimulator
import FakeAPNs
import FakeParse
import Foundation
import MediaServer

/// harness.yml's settings as the libraries' own configurations: the one place a setting of the file
/// reaches the service it sets. What a run decides (its folders, its sockets) comes in as arguments.
extension ServicesConfiguration {
    /// The coalescing window is a policy timer: it runs on the device's scaled clock.
    func apnsConfiguration(credentialsDirectory: URL, timeScale: Double) -> FakeAPNsConfiguration {
        var configuration = FakeAPNsConfiguration(credentialsDirectory: credentialsDirectory)
        configuration.port = apns.port
        configuration.controlPort = apns.controlPort
        configuration.teamId = apns.teamId
        configuration.keyId = apns.keyId
        configuration.delivery.coalescingWindow = apns.coalescingWindow * timeScale
        return configuration
    }

    /// The media root is relative to harness.yml's folder.
    func mediaConfiguration(baseDirectory: URL, accessLog: URL) -> MediaServerConfiguration {
        var configuration = MediaServerConfiguration(
            root: URL(fileURLWithPath: media.root, relativeTo: baseDirectory).standardizedFileURL)
        configuration.port = media.port
        configuration.controlPort = media.controlPort
        configuration.throttleBytesPerSecond = media.throttle
        configuration.accessLog = accessLog
        configuration.faults = media.faults
        configuration.settings.serverBytesPerSecond = media.serverThrottle
        configuration.settings.burstBytes = media.burst
        configuration.settings.firstByteDelayMilliseconds = Int(media.firstByteDelay / .milliseconds(1))
        configuration.settings.latencyMilliseconds = Int(media.latency / .milliseconds(1))
        return configuration
    }

    /// Parse pushes through `apns`, with its credentials.
    func parseConfiguration(databasePath: String, apns server: FakeAPNsServer) -> FakeParseConfiguration {
        var configuration = FakeParseConfiguration(
            databasePath: databasePath,
            apns: APNsProviderConfiguration(
                url: server.url, caFile: server.caFile.path, teamId: apns.teamId, keyId: apns.keyId,
                keyFile: server.keyFile.path))
        configuration.port = parse.port
        configuration.applicationId = parse.applicationId
        configuration.clientKey = parse.clientKey
        configuration.restAPIKey = parse.restAPIKey
        configuration.masterKey = parse.masterKey
        return configuration
    }
}

extension DeviceSettings {
    func configuration(dataDirectory: URL, socketPath: String) -> DeviceConfiguration {
        var configuration = DeviceConfiguration(dataDirectory: dataDirectory, socketPath: socketPath)
        configuration.backgroundPushBudget = backgroundPushBudget
        configuration.suspendAfterBackground = suspendAfterBackground
        configuration.launchTimeout = launchTimeout
        configuration.transfers = transfers
        configuration.pushPolicy = pushPolicy
        configuration.timeScale = timeScale
        configuration.bootLaunchDelay = bootLaunchDelay
        configuration.sessionLaunchDelay = sessionLaunchDelay
        configuration.backgroundTimeAllowance = backgroundTimeAllowance
        return configuration
    }
}
