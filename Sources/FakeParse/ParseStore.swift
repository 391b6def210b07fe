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
        var rows: [ParseClass: [String: Row]] = [.installation: [:], .pushStatus: [:], .pushOutcome: [:]]
        var columns: [ParseClass: [String: String]] = [
            .installation: InstallationSchema.columns, .pushStatus: [:], .pushOutcome: [:],
        ]
        var nextSequence = 0

        struct Row {
            var sequence: Int
            var object: Object
        }

        func objects(_ parseClass: ParseClass) -> [Object] {
            (rows[parseClass] ?? [:]).values.sorted { $0.sequence < $1.sequence }.map(\.object)
        }

        mutating func put(_ parseClass: ParseClass, _ object: Object) {
            guard let id = object["objectId"]?.stringValue else { return }
            if rows[parseClass]?[id] != nil {
                rows[parseClass]?[id]?.object = object
            } else {
                rows[parseClass]?[id] = Row(sequence: nextSequence, object: object)
                nextSequence += 1
            }
            learn(parseClass, object)
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

    func find(_ parseClass: ParseClass, _ options: FindOptions) -> (results: [Object], count: Int?) {
        options.run(over: tables.withLock { $0.objects(parseClass) })
    }

    func get(_ parseClass: ParseClass, _ objectId: String) -> Object? {
        tables.withLock { $0.rows[parseClass]?[objectId]?.object }
    }

    func objects(_ parseClass: ParseClass, matching query: ParseQuery) -> [Object] {
        tables.withLock { $0.objects(parseClass) }.filter(query.matches)
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
    func write(_ write: InstallationWrite, _ changes: ObjectChanges) throws(ParseFailure) -> Written {
        do {
            return try database.write { db in
                let (found, columns) = tables.withLock { tables in
                    (
                        write.lookup.map { query in tables.objects(.installation).filter(query.matches) } ?? [],
                        tables.columns[.installation] ?? [:]
                    )
                }
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
                    for row in objects(.installation, matching: query) {
                        guard let id = row["objectId"]?.stringValue, id != resolution.updating else { continue }
                        try db.execute(sql: "DELETE FROM installation WHERE objectId = ?", arguments: [id])
                        deleted.append(id)
                    }
                }
                try Self.put(.installation, object, in: db)
                let committed = (object: object, deleted: deleted)
                db.afterNextTransaction { _ in
                    self.tables.withLock { tables in
                        for id in committed.deleted { tables.rows[.installation]?[id] = nil }
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

    /// Applies `changes` to every row of `parseClass` matching `query`, in one transaction; returns the
    /// rows as written.
    @discardableResult
    func update(_ parseClass: ParseClass, matching query: ParseQuery, _ changes: ObjectChanges) throws -> [Object] {
        try database.write { db in
            let now = ParseDate.now()
            let written = objects(parseClass, matching: query).map { row in
                var object = changes.applied(to: row).object
                object["updatedAt"] = .string(now)
                return object
            }
            for object in written { try Self.put(parseClass, object, in: db) }
            db.afterNextTransaction { _ in
                self.tables.withLock { tables in for object in written { tables.put(parseClass, object) } }
            }
            return written
        }
    }

    /// Deletes a row; false when there was none.
    func delete(_ parseClass: ParseClass, _ objectId: String) throws -> Bool {
        try database.write { db in
            try db.execute(sql: "DELETE FROM \(parseClass.table) WHERE objectId = ?", arguments: [objectId])
            let deleted = db.changesCount > 0
            db.afterNextTransaction { _ in
                self.tables.withLock { _ = $0.rows[parseClass]?.removeValue(forKey: objectId) }
            }
            return deleted
        }
    }

    /// Stores whole objects (a `_PushStatus` as it moves along, a batch's outcomes), in one transaction.
    func save(_ parseClass: ParseClass, _ objects: Object...) throws {
        try save(parseClass, objects)
    }

    func save(_ parseClass: ParseClass, _ objects: [Object]) throws {
        try database.write { db in
            for object in objects { try Self.put(parseClass, object, in: db) }
            db.afterNextTransaction { _ in
                self.tables.withLock { tables in for object in objects { tables.put(parseClass, object) } }
            }
        }
    }

    private static func put(_ parseClass: ParseClass, _ object: Object, in db: Database) throws {
        let text = JSONValue.object(object).jsonString()
        switch parseClass {
        case .installation:
            try db.execute(
                sql: """
                    INSERT INTO installation (objectId, installationId, deviceToken, object) VALUES (?, ?, ?, ?)
                    ON CONFLICT(objectId) DO UPDATE SET installationId = excluded.installationId,
                        deviceToken = excluded.deviceToken, object = excluded.object
                    """,
                arguments: [
                    object["objectId"]?.stringValue, object["installationId"]?.stringValue,
                    object["deviceToken"]?.stringValue, text,
                ])
        case .pushStatus:
            try db.execute(
                sql: """
                    INSERT INTO pushStatus (objectId, object) VALUES (?, ?)
                    ON CONFLICT(objectId) DO UPDATE SET object = excluded.object
                    """,
                arguments: [object["objectId"]?.stringValue, text])
        case .pushOutcome:
            try db.execute(
                sql: "INSERT OR REPLACE INTO pushOutcome (objectId, pushStatusId, object) VALUES (?, ?, ?)",
                arguments: [object["objectId"]?.stringValue, object["pushStatusId"]?.stringValue, text])
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
