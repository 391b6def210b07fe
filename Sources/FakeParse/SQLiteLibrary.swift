import GRDB

/// The SQLite this process loaded, as `harness doctor` reports it.
public enum SQLiteLibrary {
    /// Its version, such as `3.40.1`, asked of an in-memory database.
    public static func version() throws -> String {
        try DatabaseQueue().read { try String.fetchOne($0, sql: "SELECT sqlite_version()") } ?? "unknown"
    }
}
