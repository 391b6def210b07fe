import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Why a file could not be read or written, in the system's own short words ("No such file or
/// directory", "Permission denied"), never Foundation's "The operation could not be completed".
public enum FileProblem {
    public static func describe(_ error: any Error) -> String {
        let error = error as NSError
        if error.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(error.code))) }
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        switch CocoaError.Code(rawValue: error.code) {
        case .fileReadNoSuchFile, .fileNoSuchFile: return String(cString: strerror(ENOENT))
        case .fileReadNoPermission, .fileWriteNoPermission: return String(cString: strerror(EACCES))
        case .fileReadTooLarge: return "it is too large"
        case .fileWriteOutOfSpace: return String(cString: strerror(ENOSPC))
        case .fileWriteVolumeReadOnly: return String(cString: strerror(EROFS))
        default: return "error \(error.code) (\(error.domain))"
        }
    }
}
