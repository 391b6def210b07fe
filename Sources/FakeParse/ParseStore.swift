import Foundation
import GRDB

/// FakeParse's durable state in one SQLite file: `_Installation` and `_PushStatus` rows, each kept as
/// its JSON object with the fields Parse looks rows up by in their own indexed columns.
final class ParseStore: Sendable {
    private let database: DatabaseQueue

    init(path: String) throws {
        database = try DatabaseQueue(path: path)
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
        try migrator.migrate(database)
    }

    struct SavedInstallation {
        var objectId: String
        var created: Bool
        var createdAt: String
        var updatedAt: String
    }

    /// Creates or updates an installation, matching an existing one by `installationId`, then by
    /// `deviceToken`, as Parse Server de-duplicates them.
    func saveInstallation(_ fields: [String: Any]) throws -> SavedInstallation {
        try database.write { db in
            let installationId = fields["installationId"] as? String
            let deviceToken = fields["deviceToken"] as? String
            var existing: Row?
            if let installationId {
                existing = try Row.fetchOne(
                    db, sql: "SELECT * FROM installation WHERE installationId = ?", arguments: [installationId])
            }
            if existing == nil, let deviceToken {
                existing = try Row.fetchOne(
                    db, sql: "SELECT * FROM installation WHERE deviceToken = ?", arguments: [deviceToken])
            }
            let now = ParseDate.now()
            var object: [String: Any]
            let created: Bool
            if let existing, let stored = Self.decode(existing["object"]) {
                object = stored
                created = false
            } else {
                object = ["objectId": ParseObjectId.make(), "createdAt": now]
                created = true
            }
            for (key, value) in fields where !["objectId", "createdAt", "updatedAt"].contains(key) {
                object[key] = value
            }
            object["updatedAt"] = now
            let objectId = object["objectId"] as! String
            try db.execute(
                sql: """
                    INSERT INTO installation (objectId, installationId, deviceToken, object) VALUES (?, ?, ?, ?)
                    ON CONFLICT(objectId) DO UPDATE SET installationId = excluded.installationId,
                        deviceToken = excluded.deviceToken, object = excluded.object
                    """,
                arguments: [
                    objectId, object["installationId"] as? String, object["deviceToken"] as? String,
                    Self.encode(object),
                ])
            return SavedInstallation(
                objectId: objectId, created: created, createdAt: object["createdAt"] as? String ?? now, updatedAt: now)
        }
    }

    func installations() throws -> [[String: Any]] {
        try database.read { db in
            try String.fetchAll(db, sql: "SELECT object FROM installation ORDER BY rowid").compactMap(Self.decode)
        }
    }

    func savePushStatus(_ object: [String: Any]) throws {
        try database.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO pushStatus (objectId, object) VALUES (?, ?)",
                arguments: [object["objectId"] as? String, Self.encode(object)])
        }
    }

    func pushStatuses() throws -> [[String: Any]] {
        try database.read { db in
            try String.fetchAll(db, sql: "SELECT object FROM pushStatus ORDER BY rowid").compactMap(Self.decode)
        }
    }

    static func encode(_ object: [String: Any]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    static func decode(_ text: String?) -> [String: Any]? {
        guard let text else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
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
    static func now() -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date())
    }
}
