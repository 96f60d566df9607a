public import Logging
import PostgresNIO

/// Provisions a PostgreSQL database for ``SettingsSync``: the schema and its row-level security,
/// and one login role per user. What `settings-sync-admin` runs; connect as a superuser.
///
/// ```swift
/// let admin = try SettingsSyncAdmin(url: "postgres://postgres@127.0.0.1/settings", password: adminPassword)
/// try await admin.install()
/// try await admin.addUser("ada", password: "correct horse battery staple")
/// print(try await admin.check().joined(separator: "\n"))
/// ```
///
/// Each user is a login role, member of `settings_sync_device`; its space for an app is
/// (the role, the app id), chosen by the server from the session. A device holding one user's
/// password can read and change that user's settings and nothing else, even with hand-written SQL.
public struct SettingsSyncAdmin: Sendable {
    let server: PostgresURL
    let logger: Logger

    /// An administrator connection to make, from `url` (as ``SettingsSync/postgres(url:password:store:app:scope:secrets:logger:)``).
    ///
    /// - Parameters:
    ///   - url: `postgres://admin@host/database`, a superuser (or a role with `CREATEROLE` and `BYPASSRLS`).
    ///   - password: the administrator's password; overrides one in the URL.
    ///   - logger: where the connection logs (default: nowhere).
    /// - Throws: ``SettingsSyncError/invalidURL(_:)``, ``SettingsSyncError/tlsRequired(host:)``.
    public init(url: String, password: String? = nil, logger: Logger = Logger(label: "settings-sync-admin", factory: { _ in SwiftLogNoOpLogHandler() })) throws(SettingsSyncError) {
        server = try PostgresURL(url, password: password)
        self.logger = logger
    }

    /// Creates or updates the schema, its policies and grants, and the `settings_sync_device` role.
    /// Idempotent; a version-1 schema's tables are kept as `settings_sync_v1_*`.
    ///
    /// - Throws: ``SettingsSyncError/admin(_:)`` when the role may not bypass row-level security,
    ///   or the server's error.
    public func install() async throws {
        try await withConnection { conn in
            let rows = try await conn.query("SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user", logger: logger)
                .decode(Bool.self).reduce(into: false) { $0 = $1 }
            guard rows else { throw SettingsSyncError.admin("install needs a superuser (or a role with BYPASSRLS and CREATEROLE)") }
            try await transaction(conn) {
                for statement in SyncSchema.statements { try await conn.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
            }
        }
    }

    /// Creates the login role `name` for one user, with only what a device needs (membership of
    /// `settings_sync_device`).
    ///
    /// - Parameters:
    ///   - name: 1–63 characters `a-z`, `0-9`, `_`, not starting with a digit or `pg_`.
    ///   - password: the user's password (stored by the server as SCRAM-SHA-256).
    /// - Throws: ``SettingsSyncError/admin(_:)`` for a bad name or empty password, or the server's error.
    public func addUser(_ name: String, password: String) async throws {
        try Self.checkRoleName(name)
        guard !password.isEmpty, !password.unicodeScalars.contains(where: { $0.value == 0 }) else {
            throw SettingsSyncError.admin("the password must be non-empty and contain no NUL")
        }
        try await withConnection { conn in
            // The server quotes the name and the password (format %I, %L); the text never reaches a log of ours.
            let sql = try await conn.query(
                "SELECT format('CREATE ROLE %I LOGIN PASSWORD %L IN ROLE \(unescaped: SyncSchema.deviceRole)', \(name)::text, \(password)::text)",
                logger: logger
            ).decode(String.self).reduce(into: "") { $0 = $1 }
            try await conn.query(PostgresQuery(unsafeSQL: sql), logger: logger)
        }
    }

    /// Drops the login role `name` and every row of its spaces, and ends its open sessions.
    ///
    /// - Parameter name: a role made by ``addUser(_:password:)``.
    /// - Returns: how many spaces were removed.
    /// - Throws: ``SettingsSyncError/admin(_:)`` for a bad name or a role that is not a sync user.
    @discardableResult
    public func removeUser(_ name: String) async throws -> Int {
        try Self.checkRoleName(name)
        return try await withConnection { conn in
            let member = try await conn.query(
                "SELECT pg_has_role(oid, '\(unescaped: SyncSchema.deviceRole)', 'MEMBER') FROM pg_roles WHERE rolname = \(name)::text::name",
                logger: logger
            ).decode(Bool.self).reduce(into: false) { $0 = $1 }
            guard member else { throw SettingsSyncError.admin("\(name) is not a sync user (a member of \(SyncSchema.deviceRole))") }
            var spaces = 0
            try await transaction(conn) {
                spaces = try await conn.query("WITH gone AS (DELETE FROM settings_sync_spaces WHERE owner = \(name)::text::name RETURNING 1) SELECT count(*)::int FROM gone", logger: logger)
                    .decode(Int.self).reduce(into: 0) { $0 = $1 }
                // Its devices' sessions end now, not when they next disconnect.
                try await conn.query("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = \(name)::text::name", logger: logger)
                let drop = try await conn.query("SELECT format('DROP ROLE %I', \(name)::text)", logger: logger)
                    .decode(String.self).reduce(into: "") { $0 = $1 }
                try await conn.query(PostgresQuery(unsafeSQL: drop), logger: logger)
            }
            return spaces
        }
    }

    /// Drops the tombstones that every device seen within `keep` has applied, in every space.
    /// A device whose cursor is older then downloads its space again in full. Run it from cron.
    ///
    /// - Parameter days: how long a silent device counts (default 90).
    /// - Returns: how many tombstones were dropped.
    @discardableResult
    public func purge(keepingDays days: Int = 90) async throws -> Int {
        guard days >= 0 else { throw SettingsSyncError.admin("days must be 0 or more") }
        return try await withConnection { conn in
            try await conn.query("SELECT settings_sync_purge(make_interval(days => \(Int32(clamping: days))))::int", logger: logger)
                .decode(Int.self).reduce(into: 0) { $0 = $1 }
        }
    }

    /// Verifies that the separation is in force, and describes what each role can see.
    ///
    /// Checks: the schema version; row-level security enabled and forced on every table with the
    /// `session_user` policy; no table or function rights for `PUBLIC`; devices may only `SELECT`
    /// and call the three device functions, which are `SECURITY DEFINER` with a pinned `search_path`.
    ///
    /// - Returns: one line per finding, then one line per user: its spaces, rows and bytes.
    /// - Throws: ``SettingsSyncError/admin(_:)`` listing what is wrong.
    public func check() async throws -> [String] {
        try await withConnection { conn in
            var problems: [String] = []
            var lines: [String] = []
            let version = try await conn.query(
                "SELECT coalesce((SELECT max(version) FROM settings_sync_meta), 0) WHERE to_regclass('public.settings_sync_meta') IS NOT NULL",
                logger: logger
            ).decode(Int32.self).reduce(into: Int32(0)) { $0 = $1 }
            guard version == SyncSchema.version else {
                throw SettingsSyncError.admin("schema version \(version), expected \(SyncSchema.version): run settings-sync-admin install")
            }
            lines.append("schema version \(version)")
            for table in SyncSchema.tables {
                let rls = try await conn.query(
                    "SELECT relrowsecurity, relforcerowsecurity FROM pg_class WHERE oid = 'public.\(unescaped: table)'::regclass",
                    logger: logger
                ).decode((Bool, Bool).self).reduce(into: (false, false)) { $0 = $1 }
                if !(rls.0 && rls.1) { problems.append("\(table): row-level security not enabled and forced") }
                let policies = try await conn.query(
                    "SELECT coalesce(qual, '') FROM pg_policies WHERE schemaname = 'public' AND tablename = '\(unescaped: table)'",
                    logger: logger
                ).decode(String.self).reduce(into: [String]()) { $0.append($1) }
                let expected = table == "settings_sync_meta" ? "true" : "(owner = SESSION_USER)"
                if policies != [expected] { problems.append("\(table): policies \(policies), expected [\(expected)]") }
                for privilege in ["SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER"] {
                    let device = try await conn.query(
                        "SELECT has_table_privilege('\(unescaped: SyncSchema.deviceRole)', 'public.\(unescaped: table)', '\(unescaped: privilege)')", logger: logger
                    ).decode(Bool.self).reduce(into: false) { $0 = $1 }
                    if device != (privilege == "SELECT") { problems.append("\(table): devices \(device ? "have" : "lack") \(privilege)") }
                }
                let publicRights = try await conn.query(
                    "SELECT count(*)::int FROM pg_class c, aclexplode(c.relacl) a WHERE c.oid = 'public.\(unescaped: table)'::regclass AND a.grantee = 0",
                    logger: logger
                ).decode(Int.self).reduce(into: 0) { $0 = $1 }
                if publicRights > 0 { problems.append("\(table): PUBLIC has rights") }
            }
            for function in SyncSchema.deviceFunctions + SyncSchema.adminFunctions {
                let row = try await conn.query("""
                    SELECT prosecdef, coalesce(array_to_string(proconfig, ','), ''),
                           has_function_privilege('\(unescaped: SyncSchema.deviceRole)', p.oid, 'EXECUTE'),
                           EXISTS (SELECT 1 FROM aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a WHERE a.grantee = 0)
                    FROM pg_proc p WHERE p.oid = 'public.\(unescaped: function)'::regprocedure
                    """, logger: logger
                ).decode((Bool, String, Bool, Bool).self).reduce(into: [(Bool, String, Bool, Bool)]()) { $0.append($1) }
                guard let found = row.first else { problems.append("\(function): missing"); continue }
                let (definer, config, device, publicCan) = found
                let forDevices = SyncSchema.deviceFunctions.contains(function)
                if forDevices && !definer { problems.append("\(function): not SECURITY DEFINER") }
                if !config.contains("search_path=pg_catalog, public, pg_temp") { problems.append("\(function): search_path not pinned") }
                if device != forDevices { problems.append("\(function): devices \(device ? "may" : "may not") call it") }
                if publicCan { problems.append("\(function): PUBLIC may call it") }
            }
            lines.append("row-level security forced on \(SyncSchema.tables.count) tables; devices SELECT their own rows and call \(SyncSchema.deviceFunctions.count) functions")
            let users = try await conn.query("""
                SELECT r.rolname::text,
                       (SELECT count(*)::int FROM settings_sync_spaces s WHERE s.owner = r.rolname),
                       (SELECT count(*)::int FROM settings_sync_entries e WHERE e.owner = r.rolname),
                       (SELECT coalesce(sum(bytes), 0)::bigint FROM settings_sync_spaces s WHERE s.owner = r.rolname)
                FROM pg_roles r WHERE r.rolname <> '\(unescaped: SyncSchema.deviceRole)' AND pg_has_role(r.oid, '\(unescaped: SyncSchema.deviceRole)', 'MEMBER')
                  AND NOT r.rolsuper ORDER BY 1
                """, logger: logger
            ).decode((String, Int, Int, Int64).self).reduce(into: [(String, Int, Int, Int64)]()) { $0.append($1) }
            for (name, spaces, rows, bytes) in users {
                lines.append("user \(name) sees only its own: \(spaces) spaces, \(rows) rows, \(bytes) bytes")
            }
            lines.append("any other role: no table rights, no functions (it sees nothing)")
            if !problems.isEmpty { throw SettingsSyncError.admin(problems.joined(separator: "; ")) }
            return lines
        }
    }

    /// One line for `error`, without secrets: PostgreSQL's message when there is one.
    ///
    /// - Parameter error: an error thrown by this type.
    /// - Returns: the message.
    public static func describe(_ error: any Error) -> String {
        SyncEngine.describe(error)
    }

    // MARK: Helpers

    static func checkRoleName(_ name: String) throws(SettingsSyncError) {
        let ok = (1...63).contains(name.utf8.count) && !name.hasPrefix("pg_") && name != SyncSchema.deviceRole
            && name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
            && !("0"..."9").contains(name.unicodeScalars.first ?? "0")
        guard ok else { throw .admin("bad user name \"\(name.prefix(80))\": use 1-63 of a-z, 0-9, _ (not starting with a digit or pg_)") }
    }

    func withConnection<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        let conn = try await server.connect(id: 1, logger: logger)
        do {
            let result = try await body(conn)
            try? await conn.close()
            return result
        } catch {
            try? await conn.close()
            throw error
        }
    }

    func transaction(_ conn: PostgresConnection, _ body: () async throws -> Void) async throws {
        try await conn.query("BEGIN", logger: logger)
        do {
            try await body()
            try await conn.query("COMMIT", logger: logger)
        } catch {
            _ = try? await conn.query("ROLLBACK", logger: logger)
            throw error
        }
    }
}
