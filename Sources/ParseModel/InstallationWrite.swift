import DeviceProtocol

/// Parse Server's rules for writing an `_Installation` (`RestWrite.handleInstallation`), as a value: the
/// checks on the id fields, the lower-casing, what to look up, and from what was found, whether the
/// write creates a row or updates one (a POST can become an update) and which duplicates go. The store
/// does the looking up and the writing; every decision is here, with a test per rule.
public struct InstallationWrite: Sendable {
    /// The row a PUT names; nil for a create.
    public let objectId: String?
    /// The body, with `deviceToken` (when 64 characters) and `installationId` lower-cased.
    public private(set) var data: [String: JSONValue]
    /// The installation id rows are matched by: the body's, or for a caller without the master key, the
    /// `X-Parse-Installation-Id` header's (which is matched by, never stored).
    public let installationId: String?
    public var deviceToken: String? { data["deviceToken"]?.stringValue }

    public init(
        objectId: String?, data: [String: JSONValue], headerInstallationId: String?, isMaster: Bool
    ) throws(ParseFailure) {
        for field in ["deviceToken", "installationId", "appIdentifier", "deviceType"] {
            if let value = data[field], value != .null, value.stringValue == nil {
                throw .schemaMismatch(
                    className: "_Installation", field: field, expected: "String",
                    got: ParseValues.typeName(value) ?? "null")
            }
        }
        var data = data
        let header = headerInstallationId.flatMap { $0.isEmpty ? nil : $0 }
        if objectId == nil, data["deviceToken"]?.stringValue == nil, data["installationId"]?.stringValue == nil,
            header == nil
        {
            throw .missingIdField
        }
        if let token = data["deviceToken"]?.stringValue, token.utf16.count == 64 {
            data["deviceToken"] = .string(token.lowercased())
        }
        if let id = data["installationId"]?.stringValue { data["installationId"] = .string(id.lowercased()) }
        self.objectId = objectId
        self.data = data
        self.installationId = (data["installationId"]?.stringValue ?? (isMaster ? nil : header))?.lowercased()
        lookup = Self.lookup(objectId: objectId, installationId: installationId, data: data)
    }

    /// The rows to fetch before deciding: by the PUT's objectId, the installation id and the device
    /// token, as one `$or`; nil when the write is a plain update that touches no id field.
    public let lookup: ParseQuery?

    static func lookup(objectId: String?, installationId: String?, data: [String: JSONValue]) -> ParseQuery? {
        let deviceToken = data["deviceToken"]?.stringValue
        if objectId != nil, deviceToken == nil, installationId == nil, data["deviceType"] == nil { return nil }
        var branches: [JSONValue] = []
        if let objectId { branches.append(["objectId": .string(objectId)]) }
        if let installationId { branches.append(["installationId": .string(installationId)]) }
        if let deviceToken { branches.append(["deviceToken": .string(deviceToken)]) }
        guard !branches.isEmpty else { return nil }
        // Equalities on strings: a clause that always compiles.
        return try? ParseQuery(where: ["$or": .array(branches)])
    }

    /// What the write does once ``lookup`` has found its rows.
    public struct Resolution: Equatable, Sendable {
        /// The row written; nil creates a new one.
        public var updating: String?
        /// Rows to delete first: other installations that held this device token.
        public var deletions: [Deletion]

        public init(updating: String?, deletions: [Deletion]) {
            self.updating = updating
            self.deletions = deletions
        }
    }

    public enum Deletion: Equatable, Sendable {
        case object(String)
        /// Every installation with this token, except those of `keeping`'s installation id (or
        /// objectId), on this app when one is named.
        case sharingToken(String, keepingInstallationId: String?, keepingObjectId: String?, appIdentifier: String?)

        /// The deletion as a `where` clause.
        public var query: [String: JSONValue] {
            switch self {
            case .object(let id): return ["objectId": .string(id)]
            case .sharingToken(let token, let installationId, let objectId, let appIdentifier):
                var clause: [String: JSONValue] = ["deviceToken": .string(token)]
                if let installationId { clause["installationId"] = ["$ne": .string(installationId)] }
                if let objectId { clause["objectId"] = ["$ne": .string(objectId)] }
                if let appIdentifier { clause["appIdentifier"] = .string(appIdentifier) }
                return clause
            }
        }
    }

    /// Decides from the rows ``lookup`` found (or nothing, when it is nil).
    public func resolve(found: [[String: JSONValue]]) throws(ParseFailure) -> Resolution {
        guard lookup != nil else { return Resolution(updating: objectId, deletions: []) }
        let objectIdMatch = objectId.flatMap { id in found.first { $0["objectId"]?.stringValue == id } }
        // JavaScript's `==`: a row without an installation id "equals" a write without one, and the same
        // for tokens; Parse Server's code relies on it, so it is kept.
        let installationIdMatch = found.last { Self.string($0["installationId"]) == installationId }
        let deviceTokenMatches = found.filter { Self.string($0["deviceToken"]) == deviceToken }

        if objectId != nil {
            guard let match = objectIdMatch else { throw .objectNotFoundForUpdate }
            let storedInstallationId = Self.string(match["installationId"])
            let storedToken = Self.string(match["deviceToken"])
            if let wanted = data["installationId"]?.stringValue, let storedInstallationId,
                wanted != storedInstallationId
            {
                throw .immutable("installationId")
            }
            if let deviceToken, let storedToken, deviceToken != storedToken, data["installationId"] == nil,
                storedInstallationId == nil
            {
                throw .immutable("deviceToken")
            }
            if let type = data["deviceType"]?.stringValue, type != Self.string(match["deviceType"]) {
                throw .immutable("deviceType")
            }
        }
        var idMatch = objectIdMatch
        if installationId != nil, let match = installationIdMatch { idMatch = match }
        if objectId == nil, data["deviceType"] == nil, idMatch == nil { throw .missingDeviceType }

        guard let idMatch else {
            if deviceTokenMatches.isEmpty { return Resolution(updating: objectId, deletions: []) }
            if deviceTokenMatches.count == 1,
                Self.string(deviceTokenMatches[0]["installationId"]) == nil || installationId == nil
            {
                return Resolution(updating: Self.string(deviceTokenMatches[0]["objectId"]), deletions: [])
            }
            guard let bodyInstallationId = data["installationId"]?.stringValue, let deviceToken else {
                throw .deviceTokenMatchesSeveral
            }
            return taking(deviceToken, into: objectId, keepingInstallationId: bodyInstallationId)
        }
        let idMatchObjectId = Self.string(idMatch["objectId"])
        if deviceTokenMatches.count == 1, Self.string(deviceTokenMatches[0]["installationId"]) == nil,
            let tokenObjectId = Self.string(deviceTokenMatches[0]["objectId"])
        {
            // The row that has the token but no installation id wins; the id's row goes.
            let deletions: [Deletion] = idMatchObjectId.map { $0 == tokenObjectId ? [] : [.object($0)] } ?? []
            return Resolution(updating: tokenObjectId, deletions: deletions)
        }
        if let deviceToken, Self.string(idMatch["deviceToken"]) != deviceToken {
            if let bodyInstallationId = data["installationId"]?.stringValue {
                return taking(deviceToken, into: idMatchObjectId, keepingInstallationId: bodyInstallationId)
            }
            if let bodyObjectId = data["objectId"]?.stringValue, bodyObjectId == idMatchObjectId {
                return taking(deviceToken, into: idMatchObjectId, keepingObjectId: bodyObjectId)
            }
        }
        return Resolution(updating: idMatchObjectId, deletions: [])
    }

    /// Writes `row` (nil: a new one) after deleting the other installations holding `token` on this
    /// write's app.
    private func taking(
        _ token: String, into row: String?, keepingInstallationId: String? = nil, keepingObjectId: String? = nil
    ) -> Resolution {
        let deletion = Deletion.sharingToken(
            token, keepingInstallationId: keepingInstallationId, keepingObjectId: keepingObjectId,
            appIdentifier: data["appIdentifier"]?.stringValue)
        return Resolution(updating: row, deletions: [deletion])
    }

    /// A stored string field, with `null` as absent (JavaScript's `null == undefined`).
    private static func string(_ value: JSONValue?) -> String? { value?.stringValue }
}
