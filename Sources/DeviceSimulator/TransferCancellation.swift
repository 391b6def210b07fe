import DeviceProtocol
import HarnessTimeline

/// Why a download task was cancelled, which decides the error the app is told.
enum TransferCancellation: Sendable, Equatable {
    /// Its app's process ended and the task lived in it (a default session).
    case diedWithApp
    /// The user force-quit the app (docs/ios-rules.md U6).
    case forceQuit
    /// The app called `cancel()` or `cancel(byProducingResumeData:)`.
    case byApp(producingResumeData: Bool)

    var error: TaskError {
        switch self {
        case .diedWithApp:
            TaskError(
                code: -999,
                localizedDescription:
                    "cancelled: the task belonged to a default session, which lives in the app's process and died with it; transfers that must outlive the app need URLSessionConfiguration.background(withIdentifier:)"
            )
        case .forceQuit:
            TaskError(
                code: -999, localizedDescription: "cancelled: the user force-quit the app",
                backgroundTaskCancelledReason: 0)
        case .byApp:
            TaskError.cancelled
        }
    }

    /// Whether the app may be handed resume data (U6: "resume data may be included" after a force-quit).
    var offersResumeData: Bool {
        switch self {
        case .diedWithApp, .byApp(producingResumeData: false): false
        case .forceQuit, .byApp(producingResumeData: true): true
        }
    }
}

/// What the daemon and one running download share: why the task was cancelled, if it was, and whether it
/// has moved on to handing its file over. From then on a cancellation does nothing, as on iOS, where a
/// task that has completed cannot be cancelled; so the app's `cancel` never waits on the app's own answer
/// to `didFinishDownloadingTo`.
final class DownloadControl: Sendable {
    private let state = LockedState<(cancellation: TransferCancellation?, delivering: Bool)>((nil, false))
    /// Where the task leaves resume data for a cancellation that asked for it.
    let resumeData = LockedState<String?>(nil)

    /// Records why the task is cancelled, unless it is handing its file over already; whether it was recorded.
    func cancel(_ why: TransferCancellation) -> Bool {
        state.withLock { state in
            guard !state.delivering else { return false }
            if state.cancellation == nil { state.cancellation = why }
            return true
        }
    }

    /// The task has its whole file and moves on to handing it over, unless it was cancelled first;
    /// whether it did.
    func beginDelivery() -> Bool {
        state.withLock { state in
            guard state.cancellation == nil else { return false }
            state.delivering = true
            return true
        }
    }

    var cancellation: TransferCancellation? { state.withLock { $0.cancellation } }
}
