import Foundation
import Logging
import PostgresNIO
import Testing
@testable import SettingsPostgres

/// Issue 30, item 1: the `SECURITY DEFINER` functions never run code a user planted. Each test has
/// a database of its own, where `public` is made writable by every role (PostgreSQL 14's default,
/// kept by `pg_upgrade`).
@Suite(TestServer.enabled, .timeLimit(.minutes(2)))
struct SearchPathTests {
    let logger = Logger(label: "tests")

    /// Regression: the functions ran as the installing superuser with `search_path = pg_catalog,
    /// public, pg_temp` and called `cardinality(text[])` unqualified, so a user's
    /// `public.cardinality(text[])` (an exact match, preferred over the built-in `anyarray` one)
    /// ran as superuser from one push.
    @Test func aUsersFunctionInAWritablePublicIsNeverRunByAPush() async throws {
        try await withPrivateDatabase { admin, database in
            try await withTestConnection(superuser: true, database: database) { conn in
                try await conn.query("GRANT CREATE ON SCHEMA public TO PUBLIC", logger: logger)
            }
            let user = try await TestServer.makeUser("hijack")
            let app = uniqueApp()
            let result = try await withTestConnection(user: (user.name, user.password), database: database) { conn in
                for type in ["text[]", "bytea[]", "bigint[]", "boolean[]"] {
                    try await conn.query(PostgresQuery(unsafeSQL: """
                        CREATE FUNCTION public.cardinality(\(type)) RETURNS int LANGUAGE plpgsql AS $$
                        BEGIN
                          CREATE TABLE IF NOT EXISTS public.hijacked AS
                            SELECT current_user AS who, (SELECT count(*) FROM settings_sync.settings_sync_entries) AS rows_seen;
                          RETURN pg_catalog.cardinality($1);
                        END $$
                        """), logger: logger)
                }
                let hlc = Int64(Date().timeIntervalSince1970 * 1000) << 16
                return try await conn.query(
                    "SELECT change_seq FROM settings_sync.settings_sync_push(\(app), \(UUID()), \(["k"]), \([ByteBuffer(bytes: [1])]), \([hlc]), \([false]))",
                    logger: logger
                ).decode(Int64.self).reduce(into: [Int64]()) { $0.append($1) }
            }
            #expect(result == [1])
            try await withTestConnection(superuser: true, database: database) { conn in
                let planted = try await conn.query("SELECT to_regclass('public.hijacked') IS NOT NULL", logger: logger)
                    .decode(Bool.self).reduce(into: false) { $0 = $1 }
                #expect(!planted, "the user's public.cardinality ran inside settings_sync_push")
            }
            _ = try await admin.check()   // public is writable, but in no function's path
        }
    }

    /// `check` fails on what a version-2 install left (functions owned by the superuser with a
    /// writable `public` in their path, a sync function in `public`), and `install` fixes it.
    @Test func checkFailsOnAWritableSchemaInAFunctionsPathAndInstallFixesIt() async throws {
        try await withPrivateDatabase { admin, database in
            let push = "settings_sync.settings_sync_push(text, uuid, text[], bytea[], bigint[], boolean[])"
            try await withTestConnection(superuser: true, database: database) { conn in
                try await conn.query("GRANT CREATE ON SCHEMA public TO PUBLIC", logger: logger)
                try await conn.query(PostgresQuery(unsafeSQL: "ALTER FUNCTION \(push) SET search_path = pg_catalog, public, pg_temp"), logger: logger)
                try await conn.query(PostgresQuery(unsafeSQL: "ALTER FUNCTION \(push) OWNER TO postgres"), logger: logger)
                try await conn.query(
                    "CREATE FUNCTION public.settings_sync_open(text) RETURNS void LANGUAGE sql SECURITY DEFINER AS 'SELECT'", logger: logger)
            }
            let error = await #expect(throws: SettingsSyncError.self) { _ = try await admin.check() }
            let text = error.map { String(describing: $0) } ?? ""
            #expect(text.contains("schema public in the sync functions' path is writable by PUBLIC"), "\(text)")
            #expect(text.contains("settings_sync_push(text, uuid, text[], bytea[], bigint[], boolean[]): search_path is 'pg_catalog, public, pg_temp', expected 'pg_catalog, pg_temp'"), "\(text)")
            #expect(text.contains("owned by postgres, expected settings_sync_owner"), "\(text)")
            #expect(text.contains("settings_sync_open(text): a sync function outside schema settings_sync"), "\(text)")
            try await admin.install()
            let lines = try await admin.check()
            #expect(lines.contains("functions run as settings_sync_owner (no superuser) with search_path pg_catalog, pg_temp; no other role may create in settings_sync"))
        }
    }

    /// The owner of the functions is no superuser and holds nothing but the sync objects; no
    /// other role may create in the schema, even after a DBA granted it.
    @Test func theOwnerIsNoSuperuserAndOnlyItCreatesInTheSchema() async throws {
        try await withPrivateDatabase { admin, database in
            let user = try await TestServer.makeUser("schema")
            try await withTestConnection(superuser: true, database: database) { conn in
                try await conn.query(PostgresQuery(unsafeSQL: "GRANT CREATE ON SCHEMA settings_sync TO PUBLIC, \(user.name)"), logger: logger)
            }
            let error = await #expect(throws: SettingsSyncError.self) { _ = try await admin.check() }
            #expect(error.map { String(describing: $0) }?.contains("schema settings_sync in the sync functions' path is writable by PUBLIC") == true)
            try await admin.install()
            _ = try await admin.check()
            try await withTestConnection(superuser: true, database: database) { conn in
                let row = try await conn.query("""
                    SELECT r.rolsuper OR r.rolcanlogin OR r.rolbypassrls OR r.rolcreaterole OR r.rolcreatedb,
                           has_schema_privilege(\(user.name), 'settings_sync', 'CREATE'),
                           (SELECT count(*)::int FROM pg_proc WHERE proowner = r.oid AND proname LIKE 'settings\\_sync\\_%')
                    FROM pg_roles r WHERE r.rolname = 'settings_sync_owner'
                    """, logger: logger).decode((Bool, Bool, Int).self).reduce(into: [(Bool, Bool, Int)]()) { $0.append($1) }
                #expect(row.first?.0 == false)
                #expect(row.first?.1 == false)
                #expect(row.first?.2 == 5)
            }
        }
    }
}
