import HarnessTimeline
import NIOCore
import Recording

/// The device-protocol lines of one app connection, into the cassette's transcript of that app. Lines
/// before `hello` names the app are held (with their times) until it does; a connection refused at
/// `hello` leaves no transcript.
final class TranscriptTap: Sendable {
    private let recorder: CassetteRecorder
    /// `@<device>` after the bundle id, on a named device.
    private let suffix: String
    private let state = LockedState<State>(State())

    private struct State {
        var app: String?
        var held: [(side: TranscriptLine.Side, line: [UInt8], at: Double)] = []
    }

    /// Lines held before `hello`: an app must say hello first, so a few are plenty.
    static let heldLimit = 16

    init(recorder: CassetteRecorder, device: String?) {
        self.recorder = recorder
        suffix = device.map { "@" + $0 } ?? ""
    }

    func record(_ side: TranscriptLine.Side, _ line: ByteBuffer) {
        let bytes = Array(line.readableBytesView)
        // Written under the lock, so that the lines of both sides keep the order they passed in.
        state.withLock { state in
            if let app = state.app {
                recorder.transcribe(app: app, from: side, line: bytes)
            } else if state.held.count < Self.heldLimit {
                state.held.append((side, bytes, recorder.elapsed))
            }
        }
    }

    /// The app is known: what was held goes first.
    func named(_ app: String) {
        state.withLock { state in
            for line in state.held {
                recorder.transcribe(app: app + suffix, from: line.side, line: line.line, at: line.at)
            }
            state.app = app + suffix
            state.held = []
        }
    }
}
