/// The ranges numbers from outside (control APIs, Parse REST, harness.yml, the device protocol, the
/// command line) are checked against where they enter, before any arithmetic touches them: one process
/// serves every service, and a trap on one client's number would take all of them down.
///
/// The limits are far beyond anything a test needs and far below where `Int`, `Duration` or a
/// `Double`-to-`Int` conversion could overflow. docs/limits.md lists them for users.
public enum InputBounds {
    /// A delay, latency or timeout in milliseconds: up to a day.
    public static let milliseconds: ClosedRange<Int> = 0...86_400_000
    /// A delay or interval in seconds: up to a day.
    public static let seconds: ClosedRange<Int> = 0...86_400
    /// A byte count or offset: up to a tebibyte.
    public static let bytes: ClosedRange<Int> = 0...(1 << 40)
    /// A rate in bytes per second: up to a tebibyte a second.
    public static let bytesPerSecond: ClosedRange<Int> = 1...(1 << 40)
    /// A count of requests or repetitions: up to a billion.
    public static let count: ClosedRange<Int> = 1...1_000_000_000
    /// A rate in requests per second: a millionth up to a million.
    public static let requestsPerSecond: ClosedRange<Double> = 0.000_001...1_000_000
    /// A badge number, as iOS's `NSInteger` badge is shown: 0 up to `Int32.max`.
    public static let badge: ClosedRange<Int> = 0...Int(Int32.max)
    /// Epoch seconds: 1970 up to the last second of 9999.
    public static let epochSeconds: ClosedRange<Int> = 0...253_402_300_799

    /// `nil` when `value` lies in `range`, otherwise a sentence naming `name` and the range.
    public static func problem(_ name: String, _ value: Int, in range: ClosedRange<Int>, unit: String = "")
        -> String?
    {
        guard !range.contains(value) else { return nil }
        return "\(name) must be between \(range.lowerBound) and \(range.upperBound)\(unit), not \(value)"
    }

    /// `nil` when `value` is a finite number in `range`, otherwise a sentence naming `name` and the range.
    public static func problem(_ name: String, _ value: Double, in range: ClosedRange<Double>, unit: String = "")
        -> String?
    {
        guard !(value.isFinite && range.contains(value)) else { return nil }
        return
            "\(name) must be between \(format(range.lowerBound)) and \(format(range.upperBound))\(unit), not \(value)"
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? "\(Int(value))" : "\(value)"
    }
}
