import Foundation

/// HTTP dates (RFC 9110 §5.6.7): written as IMF-fixdate, read in all three formats a client may send.
///
/// By hand rather than with `DateFormatter`, which costs tens of microseconds to make and is not
/// safe to share between threads; every response carries two dates.
public enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let longDays = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `Sun, 06 Nov 1994 08:49:37 GMT`, to the whole second.
    public static func format(_ date: Date) -> String {
        let time = Calendar.gmt.date(date)
        return "\(days[time.weekday]), \(two(time.day)) \(months[time.month - 1]) \(time.year) "
            + "\(two(time.hour)):\(two(time.minute)):\(two(time.second)) GMT"
    }

    /// The Apache access log's `[06/Nov/1994:08:49:37 +0000]` (without the brackets).
    static func commonLogFormat(_ date: Date) -> String {
        let time = Calendar.gmt.date(date)
        return "\(two(time.day))/\(months[time.month - 1])/\(time.year):"
            + "\(two(time.hour)):\(two(time.minute)):\(two(time.second)) +0000"
    }

    /// Reads IMF-fixdate, the obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime
    /// (`Sun Nov  6 08:49:37 1994`); nil for anything else, which a conditional header then ignores.
    public static func parse(_ text: String) -> Date? {
        let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        var day: Int?, month: Int?, year: Int?, clock: String?
        if words.count == 6, words[5] == "GMT", words[0].hasSuffix(","), days.contains(String(words[0].dropLast())) {
            // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
            guard words[1].count == 2, words[3].count == 4 else { return nil }
            (day, month, year, clock) = (
                Int(words[1]), months.firstIndex(of: words[2]).map { $0 + 1 }, Int(words[3]), words[4]
            )
        } else if words.count == 4, words[3] == "GMT", words[0].hasSuffix(","),
            longDays.contains(String(words[0].dropLast()))
        {
            // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT; a two-digit year is read as the most recent
            // year with those digits that is not more than 50 years ahead (RFC 9110).
            let parts = words[1].split(separator: "-").map(String.init)
            guard parts.count == 3, parts[0].count == 2, parts[2].count == 2, let short = Int(parts[2]) else {
                return nil
            }
            let thisYear = Calendar.gmt.date(Date()).year
            var full = thisYear - thisYear % 100 + short
            if full > thisYear + 50 { full -= 100 }
            (day, month, year, clock) = (Int(parts[0]), months.firstIndex(of: parts[1]).map { $0 + 1 }, full, words[2])
        } else if words.count == 5, days.contains(words[0]) {
            // asctime: Sun Nov  6 08:49:37 1994
            guard words[4].count == 4 else { return nil }
            (day, month, year, clock) = (
                Int(words[2]), months.firstIndex(of: words[1]).map { $0 + 1 }, Int(words[4]), words[3]
            )
        }
        guard let day, let month, let year, let clock else { return nil }
        let fields = clock.split(separator: ":").map { Int($0) }
        guard fields.count == 3, let hour = fields[0], let minute = fields[1], let second = fields[2],
            (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        let components = DateComponents(
            calendar: Calendar.gmt, timeZone: TimeZone(identifier: "GMT"), year: year, month: month, day: day,
            hour: hour,
            minute: minute, second: second)
        guard components.isValidDate, let date = components.date else { return nil }
        return date
    }

    private static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}

extension Calendar {
    /// The Gregorian calendar in GMT.
    static let gmt: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "GMT")!
        return calendar
    }()

    /// The fields of a date, to the second; `weekday` counts from 0 (Sunday).
    func date(_ date: Date) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, weekday: Int) {
        let c = dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
        return (c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!, c.weekday! - 1)
    }
}
