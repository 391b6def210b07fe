import DeviceProtocol
import Foundation

/// `UIApplicationMain` for apps under test: connects to the device, performs the `hello` handshake,
/// calls `didFinishLaunchingWithOptions` and then runs the main queue forever.
///
/// Reads `HARNESS_DEVICE_SOCKET`; exits with status 78 (EX_CONFIG) and a message on standard error when
/// the app was not started by a device simulator.
// swift-format-ignore: AlwaysUseLowerCamelCase
// (named after UIKit's `UIApplicationMain`, which it stands in for)
@MainActor
public func ApplicationMain(bundleIdentifier: String, delegate: any ApplicationDelegate) -> Never {
    guard let socketPath = ProcessInfo.processInfo.environment["HARNESS_DEVICE_SOCKET"] else {
        FileHandle.standardError.write(
            Data("HARNESS_DEVICE_SOCKET is not set: this app runs under the PushHarness device simulator\n".utf8))
        exit(78)
    }
    let connection: DeviceConnection
    do {
        connection = try DeviceConnection(socketPath: socketPath) { message in
            DispatchQueue.main.async {
                MainActor.assumeIsolated {
                    if let application = Application.shared {
                        application.handle(message)
                    } else {
                        Application.earlyMessages.append(message)
                    }
                }
            }
        }
    } catch {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(78)
    }
    let keepDelegate = delegate
    Task { @MainActor in
        do {
            let hello = try await connection.call(
                DeviceMethod.hello,
                HelloParams(bundleId: bundleIdentifier, pid: ProcessInfo.processInfo.processIdentifier)
            ).decode(HelloResult.self)
            let application = Application(bundleIdentifier: bundleIdentifier, connection: connection, hello: hello)
            application.delegate = keepDelegate
            Application.shared = application
            let options = LaunchOptions(
                reason: hello.launchReason, remoteNotification: hello.remoteNotification?.userInfo)
            _ = keepDelegate.application(application, didFinishLaunchingWithOptions: options)
            if let push = hello.remoteNotification { application.deliver(push) }
            // Whatever the device sent right after the handshake, in order.
            let early = Application.earlyMessages
            Application.earlyMessages.removeAll()
            for message in early { application.handle(message) }
        } catch {
            FileHandle.standardError.write(Data("device handshake failed: \(error)\n".utf8))
            exit(78)
        }
    }
    withExtendedLifetime(keepDelegate) { dispatchMain() }
}
