import AsyncHTTPClient
import DeviceProtocol
import Foundation
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

extension TaskError {
    /// `NSURLErrorCancelled`.
    static let cancelled = TaskError(code: -999, localizedDescription: "cancelled")

    /// The `NSURLErrorDomain` error iOS would report for a failure of the HTTP client, `written` bytes
    /// into a file of `expected` (-1: unknown).
    static func transferFailure(_ error: any Error, after written: Int64 = 0, of expected: Int64 = -1) -> TaskError {
        if let error = error as? TaskError { return error }
        if error is CancellationError || Task.isCancelled { return cancelled }
        if let error = error as? HTTPClientError {
            switch error {
            case .readTimeout, .deadlineExceeded:
                return TaskError(code: -1001, localizedDescription: "the request timed out after \(written) bytes")
            case .connectTimeout:
                return TaskError(code: -1001, localizedDescription: "the request timed out connecting")
            case .cancelled:
                return cancelled
            default:
                break
            }
        }
        if error is NIOConnectionError || (error as? IOError)?.errnoCode == ECONNREFUSED {
            return TaskError(code: -1004, localizedDescription: "could not connect to the server: \(error)")
        }
        let of = expected >= 0 ? " of \(expected)" : ""
        let cause = (error as? IOError).map { String(cString: strerror($0.errnoCode)).lowercased() } ?? "\(error)"
        return TaskError(
            code: -1005, localizedDescription: "the network connection was lost after \(written)\(of) bytes (\(cause))")
    }
}
