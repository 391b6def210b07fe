import Foundation

/// A Parse `where` constraint on `_Installation`: equality, `$in`, `$nin`, `$ne`, `$exists`, and array
/// fields matching any element, as Parse Server evaluates them.
struct InstallationQuery {
    let constraints: [String: Any]

    func matches(_ object: [String: Any]) -> Bool {
        constraints.allSatisfy { key, condition in matches(object[key], condition) }
    }

    private func matches(_ value: Any?, _ condition: Any) -> Bool {
        if let operators = condition as? [String: Any], operators.keys.allSatisfy({ $0.hasPrefix("$") }) {
            return operators.allSatisfy { name, operand in
                switch name {
                case "$in": return (operand as? [Any])?.contains { equal(value, $0) } ?? false
                case "$nin": return !((operand as? [Any])?.contains { equal(value, $0) } ?? false)
                case "$ne": return !equal(value, operand)
                case "$exists": return (operand as? Bool ?? true) == (value != nil && !(value is NSNull))
                case "$all":
                    let wanted = operand as? [Any] ?? []
                    return wanted.allSatisfy { item in equal(value, item) }
                default: return false
                }
            }
        }
        return equal(value, condition)
    }

    /// Equality the Parse way: an array field equals a scalar when it contains it.
    private func equal(_ value: Any?, _ expected: Any) -> Bool {
        if let array = value as? [Any], !(expected is [Any]) {
            return array.contains { scalarEqual($0, expected) }
        }
        return scalarEqual(value, expected)
    }

    private func scalarEqual(_ lhs: Any?, _ rhs: Any) -> Bool {
        switch (lhs, rhs) {
        case (let a as String, let b as String): a == b
        case (let a as Bool, let b as Bool): a == b
        case (let a as Double, let b as Double): a == b
        case (let a as Int, let b as Int): a == b
        case (let a as Int, let b as Double): Double(a) == b
        case (let a as Double, let b as Int): a == Double(b)
        default: false
        }
    }
}
