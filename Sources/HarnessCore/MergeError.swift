import Foundation

/// Why report folders cannot be joined.
public struct MergeError: Error, CustomStringConvertible, Equatable {
    public var description: String

    init(_ description: String) { self.description = description }
}
