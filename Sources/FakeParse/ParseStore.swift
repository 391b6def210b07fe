import DeviceProtocol
import Foundation
import GRDB
import HarnessTimeline
import ParseModel

/// FakeParse's durable state in one SQLite file in WAL mode: `_Installation` and `_PushStatus` rows,
/// each kept as its JSON object, with the fields installations are looked up by in indexed columns.
///
/// Every write is one transaction, committed before the client hears of it, so a killed process loses
/// nothing it acknowledged. Queries run over a copy of the rows kept in memory, changed only when a
/// transaction commits; the decisions (dedupe, field operations, `where`) are ParseModel's values.
final class ParseStore: Sendable {
    typealias Object = [String: JSONValue]

    private let database: DatabasePool
    private let tables = LockedState(Tables())

    /// The rows in memory, in the order they were first stored, with the column types learnt so far.
    struct Tables {
        // A stored property per class, so that a change is made in place (a dictionary of dictionaries
        // would copy the inner one on each change).
        private var installations: [String: Row] = [:]
        private var pushStatuses: [String: Row] = [:]
        private var pushOutcomes: [String: Row] = [:]
        var columns: [ParseClass: [String: String]] = [
            .installation: InstallationSchema.columns, .pushStatus: [:], .pushOutcome: [:],
        ]
        var nextSequence = 0

        struct Row {
            var sequence: Int
            var object: Object
        }

        /// Installations by the fields their writes look them up by: value → objectIds.
        var byInstallationId: [String: Set<String>] = [:]
        var byDeviceToken: [String: Set<String>] = [:]

        func rows(_ parseClass: ParseClass) -> [String: Row] {
            switch parseClass {
            case .installation: installations
            case .pushStatus: pushStatuses
            case .pushOutcome: pushOutcomes
            }
        }

        private mutating func changeRows<T>(_ parseClass: ParseClass, _ change: (inout [String: Row]) -> T) -> T {
            switch parseClass {
            case .installation: change(&installations)
            case .pushStatus: change(&pushStatuses)
            case .pushOutcome: change(&pushOutcomes)
            }
        }

        func object(_ parseClass: ParseClass, _ id: String) -> Object? { rows(parseClass)[id]?.object }

        func objects(_ parseClass: ParseClass) -> [Object] {
            rows(parseClass).values.sorted { $0.sequence < $1.sequence }.map(\.object)
        }

        /// The installations with any of these values, in the order they were stored: what a write's
        /// lookup (or a token's clean-up) can match, found without reading every row.
        func installations(objectId: String? = nil, installationId: String? = nil, deviceToken: String? = nil)
            -> [Object]
        {
            var ids = Set(objectId.map { [$0] } ?? [])
            if let installationId { ids.formUnion(byInstallationId[installationId] ?? []) }
            if let deviceToken { ids.formUnion(byDeviceToken[deviceToken] ?? []) }
            return ids.compactMap { installations[$0] }.sorted { $0.sequence < $1.sequence }.map(\.object)
        }

        mutating func put(_ parseClass: ParseClass, _ object: Object) {
            guard let id = object["objectId"]?.stringValue else { return }
            if let existing = rows(parseClass)[id] {
                unindex(parseClass, existing.object)
                changeRows(parseClass) { $0[id]?.object = object }
            } else {
                let sequence = nextSequence
                changeRows(parseClass) { $0[id] = Row(sequence: sequence, object: object) }
                nextSequence += 1
            }
            index(parseClass, object)
            learn(parseClass, object)
        }

        mutating func remove(_ parseClass: ParseClass, _ id: String) {
            guard let existing = changeRows(parseClass, { $0.removeValue(forKey: id) }) else { return }
            unindex(parseClass, existing.object)
        }

        private mutating func index(_ parseClass: ParseClass, _ object: Object) {
            guard parseClass == .installation, let id = object["objectId"]?.stringValue else { return }
            if let value = object["installationId"]?.stringValue { byInstallationId[value, default: []].insert(id) }
            if let value = object["deviceToken"]?.stringValue { byDeviceToken[value, default: []].insert(id) }
        }

        private mutating func unindex(_ parseClass: ParseClass, _ object: Object) {
            guard parseClass == .installation, let id = object["objectId"]?.stringValue else { return }
            if let value = object["installationId"]?.stringValue { Self.remove(id, at: value, from: &byInstallationId) }
            if let value = object["deviceToken"]?.stringValue { Self.remove(id, at: value, from: &byDeviceToken) }
        }

        private static func remove(_ id: String, at value: String, from index: inout [String: Set<String>]) {
            index[value]?.remove(id)
            if index[value]?.isEmpty == true { index[value] = nil }
        }

        mutating func learn(_ parseClass: ParseClass, _ object: Object) {
            for (key, value) in object where columns[parseClass]?[key] == nil {
                if let type = ParseValues.typeName(value) { columns[parseClass]?[key] = type }
            }
        }
    }

    init(path: String) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        database = try DatabasePool(path: path, configuration: configuration)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.create(table: "installation") { table in
                table.primaryKey("objectId", .text)
                table.column("installationId", .text).indexed()
                table.column("deviceToken", .text).indexed()
                table.column("object", .text).notNull()
            }
            try db.create(table: "pushStatus") { table in
                table.primaryKey("objectId", .text)
                table.column("object", .text).notNull()
            }
        }
        migrator.registerMigration("v2: per-device push outcomes") { db in
            try db.create(table: "pushOutcome") { table in
                table.primaryKey("objectId", .text)
                table.column("pushStatusId", .text).indexed()
                table.column("object", .text).notNull()
            }
        }
        try migrator.migrate(database)
        let loaded = try database.read { db in
            try ParseClass.allCases.map { parseClass in
                (parseClass, try String.fetchAll(db, sql: "SELECT object FROM \(parseClass.table) ORDER BY rowid"))
            }
        }
        tables.withLock { tables in
            for (parseClass, texts) in loaded {
                for text in texts { if let object = Self.decode(text) { tables.put(parseClass, object) } }
            }
        }
    }

    // MARK: Reading

    func find(_ parseClass: ParseClass, _ options: FindOptions) throws(ParseFailure) -> (
        results: [Object], count: Int?
    ) {
        try options.run(over: tables.withLock { $0.objects(parseClass) })
    }

    func get(_ parseClass: ParseClass, _ objectId: String) -> Object? {
        tables.withLock { $0.object(parseClass, objectId) }
    }

    /// Throws when a `$regex` of `query` runs past its budget (``ParseQuery/regexStepBudget``).
    func objects(_ parseClass: ParseClass, matching query: ParseQuery) throws(ParseFailure) -> [Object] {
        try query.filter(tables.withLock { $0.objects(parseClass) })
    }

    // MARK: Writing installations

    struct Written {
        var object: Object
        var created: Bool
        /// What field operations produced, for the response.
        var results: Object
        var deleted: [String]
    }

    /// Writes an installation as Parse Server would: looks up the rows the dedupe rules need, decides,
    /// checks the changes against the columns, deletes the duplicates and writes, in one transaction.
    func write(_ write: InstallationWrite, _ changes: ObjectChanges) async throws(ParseFailure) -> Written {
        do {
            return try await database.write { db in
                let (lookedUp, columns) = tables.withLock { tables in
                    (
                        write.lookup.map { _ in
                            tables.installations(
                                objectId: write.objectId, installationId: write.installationId,
                                deviceToken: write.deviceToken)
                        } ?? [],
                        tables.columns[.installation] ?? [:]
                    )
                }
                let found = try write.lookup?.filter(lookedUp) ?? []
                let resolution = try write.resolve(found: found)
                try changes.check(className: InstallationSchema.className, columns: columns)
                let now = ParseDate.now()
                var stored: Object
                if let id = resolution.updating {
                    guard let existing = get(.installation, id) else {
                        throw write.objectId == nil ? ParseFailure.objectNotFoundForUpdate : ParseFailure.objectNotFound
                    }
                    stored = existing
                } else {
                    stored = ["objectId": .string(ParseObjectId.make()), "createdAt": .string(now)]
                }
                let applied = changes.applied(to: stored)
                var object = applied.object
                object["updatedAt"] = .string(now)
                var deleted: [String] = []
                for deletion in resolution.deletions {
                    let query = try ParseQuery(where: deletion.query)
                    let candidates = tables.withLock { tables in
                        switch deletion {
                        case .object(let id): tables.installations(objectId: id)
                        case .sharingToken(let token, _, _, _): tables.installations(deviceToken: token)
                        }
                    }
                    for row in try query.filter(candidates) {
                        guard let id = row["objectId"]?.stringValue, id != resolution.updating else { continue }
                        try db.execute(sql: "DELETE FROM installation WHERE objectId = ?", arguments: [id])
                        deleted.append(id)
                    }
                }
                try Self.put(.installation, object, in: db)
                let committed = (object: object, deleted: deleted)
                db.afterNextTransaction { _ in
                    self.tables.withLock { tables in
                        for id in committed.deleted { tables.remove(.installation, id) }
                        tables.put(.installation, committed.object)
                    }
                }
                return Written(
                    object: object, created: resolution.updating == nil, results: applied.results, deleted: deleted)
            }
        } catch let failure as ParseFailure {
            throw failure
        } catch {
            throw ParseFailure(code: 1, "the database refused the write: \(error)")
        }
    }

    /// Applies `changes` to every row of `parseClass` matching `query`, and saves `others` (a push's
    /// status that says the change is made), in one transaction; returns the rows as written.
    @discardableResult
    func update(
        _ parseClass: ParseClass, matching query: ParseQuery, _ changes: ObjectChanges, saving others: [Object] = [],
        in othersClass: ParseClass = .pushStatus
    ) async throws -> [Object] {
        try await database.write { db in
            let now = ParseDate.now()
            let written = try objects(parseClass, matching: query).map { row in
                var object = changes.applied(to: row).object
                object["updatedAt"] = .string(now)
                return object
            }
            for object in written { try Self.put(parseClass, object, in: db) }
            for object in others { try Self.put(othersClass, object, in: db) }
            db.afterNextTransaction { _ in
                self.tables.withLock { tables in
                    for object in written { tables.put(parseClass, object) }
                    for object in others { tables.put(othersClass, object) }
                }
            }
            return written
        }
    }

    /// Deletes a row; false when there was none.
    func delete(_ parseClass: ParseClass, _ objectId: String) async throws -> Bool {
        try await database.write { db in
            try db.execute(sql: "DELETE FROM \(parseClass.table) WHERE objectId = ?", arguments: [objectId])
            let deleted = db.changesCount > 0
            db.afterNextTransaction { _ in
                self.tables.withLock { $0.remove(parseClass, objectId) }
            }
            return deleted
        }
    }

    /// Stores whole objects (a `_PushStatus` as it moves along, a batch's outcomes), in one transaction.
    func save(_ parseClass: ParseClass, _ objects: Object...) async throws {
        try await save(parseClass, objects)
    }

    func save(_ parseClass: ParseClass, _ objects: [Object]) async throws {
        try await database.write { db in
            for object in objects { try Self.put(parseClass, object, in: db) }
            db.afterNextTransaction { _ in
                self.tables.withLock { tables in for object in objects { tables.put(parseClass, object) } }
            }
        }
    }

    /// Several classes' rows in one transaction: a batch's outcomes and the push's status, say.
    func save(_ groups: [(ParseClass, [Object])]) async throws {
        try await database.write { db in
            for (parseClass, objects) in groups {
                for object in objects { try Self.put(parseClass, object, in: db) }
            }
            db.afterNextTransaction { _ in
                self.tables.withLock { tables in
                    for (parseClass, objects) in groups {
                        for object in objects { tables.put(parseClass, object) }
                    }
                }
            }
        }
    }

    /// Writes one row with a statement compiled once per connection (GRDB keeps it).
    private static func put(_ parseClass: ParseClass, _ object: Object, in db: Database) throws {
        let text = ParseJSON.text(.object(object))
        switch parseClass {
        case .installation:
            try db.cachedStatement(
                sql: """
                    INSERT INTO installation (objectId, installationId, deviceToken, object) VALUES (?, ?, ?, ?)
                    ON CONFLICT(objectId) DO UPDATE SET installationId = excluded.installationId,
                        deviceToken = excluded.deviceToken, object = excluded.object
                    """
            ).execute(arguments: [
                object["objectId"]?.stringValue, object["installationId"]?.stringValue,
                object["deviceToken"]?.stringValue, text,
            ])
        case .pushStatus:
            try db.cachedStatement(
                sql: """
                    INSERT INTO pushStatus (objectId, object) VALUES (?, ?)
                    ON CONFLICT(objectId) DO UPDATE SET object = excluded.object
                    """
            ).execute(arguments: [object["objectId"]?.stringValue, text])
        case .pushOutcome:
            try db.cachedStatement(
                sql: "INSERT OR REPLACE INTO pushOutcome (objectId, pushStatusId, object) VALUES (?, ?, ?)"
            ).execute(arguments: [object["objectId"]?.stringValue, object["pushStatusId"]?.stringValue, text])
        }
    }

    static func decode(_ text: String) -> Object? {
        (try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)))?.objectValue
    }
}

extension ParseClass {
    var table: String {
        switch self {
        case .installation: "installation"
        case .pushStatus: "pushStatus"
        case .pushOutcome: "pushOutcome"
        }
    }
}

/// Parse's object ids: 10 random alphanumerics.
enum ParseObjectId {
    static func make() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<10).map { _ in alphabet.randomElement()! })
    }
}

/// Parse's dates: ISO 8601, UTC, milliseconds.
enum ParseDate {
    static func now() -> String { string(Date()) }

    static func string(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
