public import Logging
import Foundation
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
    /// How long ``install()`` keeps starting over while devices or another administrator hold a
    /// lock it needs (each try waits at most ``SyncSchema/lockTimeout`` per lock), and how long
    /// one statement of ``check()`` waits for a lock. Tests shorten it.
    var lockWait: Duration = .seconds(30)

    /// An administrator connection to make, from `url` (as ``SettingsSync/postgres(url:password:store:app:scope:secrets:logger:)``).
    ///
    /// - Parameters:
    ///   - url: `postgres://admin@host/database`, a superuser (``install()`` needs one; the other
    ///     steps a role with `CREATEROLE` and `BYPASSRLS` may do).
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
    /// Safe to run while devices sync: it takes every table lock it needs first, in the order
    /// devices take them, each with a short lock timeout; when a lock is busy it rolls back and
    /// starts over (for up to 30 s), so neither it nor a device fails with a deadlock. Devices
    /// wait a moment while it runs. A sync user's session whose transaction has held a sync table
    /// for over 5 s when install finds it busy (idle in a transaction, or a long statement) is
    /// ended: one user cannot make install fail. Other roles' sessions are waited for.
    ///
    /// The objects live in the schema `settings_sync`, owned by the role `settings_sync_owner`
    /// (not a superuser, no attributes, member of nothing), and only it may create there (install
    /// revokes `CREATE` from anyone else); the functions run with `search_path = pg_catalog,
    /// pg_temp`. A version-2 schema in `public` is moved there and its functions in `public` are
    /// dropped. Every sync user's role gets the session bounds of ``addUser(_:password:connectionLimit:)``.
    ///
    /// - Throws: ``SettingsSyncError/admin(_:)`` when the role is not a superuser,
    ///   when the server cannot be reached, or naming the statement that failed and the server's
    ///   message (for example `canceling statement due to lock timeout (55P03)` when the tables
    ///   stayed locked for 30 s).
    public func install() async throws {
        try await withConnection("install") { conn in
            let allowed = try await rows(conn, "install", "SELECT rolsuper FROM pg_roles WHERE rolname = current_user") {
                try $0.decode(Bool.self)
            }
            guard allowed.first == true else { throw SettingsSyncError.admin("install needs a superuser (it hands the schema to \(SyncSchema.ownerRole))") }
            let deadline = ContinuousClock.now + lockWait
            var attempt = 0
            while true {
                attempt += 1
                do {
                    try await transaction(conn, "install") {
                        for (index, statement) in SyncSchema.statements.enumerated() {
                            _ = try await rows(conn, "install (statement \(index + 1) of \(SyncSchema.statements.count))", PostgresQuery(unsafeSQL: statement)) { _ in () }
                        }
                    }
                    return
                } catch let failure as AdminFailure where failure.isLockConflict && ContinuousClock.now < deadline {
                    logger.debug("install: \(failure.description); starting over (attempt \(attempt))")
                    // A sync user's transaction that has held a sync table for longer than any
                    // device's does (idle in a transaction, or a long statement) does not hold
                    // install up: its session ends. Superusers' and other roles' sessions are left.
                    let ended = try await rows(
                        conn, "install",
                        PostgresQuery(unsafeSQL: "SELECT count(pg_catalog.pg_terminate_backend(pid))::int FROM (\(SyncSchema.blockingUserSessions(olderThanMilliseconds: Self.milliseconds(SyncSchema.userTransactionLimit)))) AS blocking")
                    ) { try $0.decode(Int.self) }.last ?? 0
                    if ended > 0 { logger.notice("install: ended \(ended) sync user session(s) that held a sync table in a transaction for over \(SyncSchema.userTransactionLimit)") }
                    // Backoff with jitter, so that the devices' statements queued meanwhile run first.
                    try await Task.sleep(for: .milliseconds(Int.random(in: 20...(50 * min(attempt, 10)))))
                }
            }
        }
    }

    /// How many connections one user may hold at once, unless ``addUser(_:password:connectionLimit:)``
    /// is told otherwise: a device holds one (two for a moment while it reconnects), so 24 lets a
    /// user run 20 devices, and takes at most a quarter of a default server's 100 connections
    /// from the other users (raise `max_connections` for more users than that). A device refused
    /// by the limit (53300) is offline and tries again with backoff, 100 ms doubling to 2 s.
    public static let defaultConnectionLimit = 24

    /// Creates the login role `name` for one user, with only what a device needs (membership of
    /// `settings_sync_device`), at most `connectionLimit` connections at once, and bounds on its
    /// sessions: a transaction left idle ends after 5 s, a statement after 60 s, a lock wait after 10 s.
    ///
    /// The password never reaches the server: what is sent is its SCRAM-SHA-256 verifier, computed
    /// here (as `psql`'s `\password` does), so no statement or error log holds it.
    ///
    /// - Parameters:
    ///   - name: 1–63 characters `a-z`, `0-9`, `_`, not starting with a digit or `pg_`.
    ///   - password: the user's password.
    ///   - connectionLimit: at most this many connections at once (1 or more; default ``defaultConnectionLimit``).
    /// - Throws: ``SettingsSyncError/admin(_:)`` for a bad name, an empty password or a limit
    ///   under 1, or the server's error.
    public func addUser(_ name: String, password: String, connectionLimit: Int = Self.defaultConnectionLimit) async throws {
        try Self.checkRoleName(name)
        guard !password.isEmpty, !password.unicodeScalars.contains(where: { $0.value == 0 }) else {
            throw SettingsSyncError.admin("the password must be non-empty and contain no NUL")
        }
        guard connectionLimit >= 1 else { throw SettingsSyncError.admin("the connection limit must be 1 or more") }
        let verifier = SCRAMVerifier(password: password).text
        try await withConnection("add-user") { conn in
            try await bound(conn, "add-user")
            // The server quotes the name and the verifier (format %I, %L).
            let create = try await rows(
                conn, "add-user",
                "SELECT format('CREATE ROLE %I LOGIN PASSWORD %L CONNECTION LIMIT %s IN ROLE \(unescaped: SyncSchema.deviceRole)', \(name)::text, \(verifier)::text, \(Int32(clamping: connectionLimit))::int)"
            ) { try $0.decode(String.self) }
            try await transaction(conn, "add-user") {
                do {
                    _ = try await rows(conn, "add-user", PostgresQuery(unsafeSQL: create.last ?? "")) { _ in () }
                } catch let failure as AdminFailure {
                    // The statement holds the verifier (which a guess can be checked against): not shown.
                    throw AdminFailure(step: "add-user", statement: "CREATE ROLE … PASSWORD '(SCRAM-SHA-256 verifier, not shown)' …", error: failure.error)
                }
                for (setting, value) in SyncSchema.userSettings {
                    let alter = try await rows(conn, "add-user", "SELECT format('ALTER ROLE %I SET %I = %L', \(name)::text, \(setting)::text, \(value)::text)") {
                        try $0.decode(String.self)
                    }
                    _ = try await rows(conn, "add-user", PostgresQuery(unsafeSQL: alter.last ?? "")) { _ in () }
                }
            }
        }
    }

    /// Drops the login role `name` and every row of its spaces, and ends its open sessions.
    ///
    /// Only a sync user is removed: a member of `settings_sync_device` that is not a superuser,
    /// has no `CREATEROLE`, `BYPASSRLS` or `REPLICATION`, and is not the administrator connected.
    /// Every statement is bounded (10 s; 5 s waiting for a lock).
    ///
    /// - Parameter name: a role made by ``addUser(_:password:connectionLimit:)``.
    /// - Returns: how many spaces were removed.
    /// - Throws: ``SettingsSyncError/admin(_:)`` for a bad name or a role that is not a sync user
    ///   (nothing is changed, no session ended), or naming the statement that failed and the
    ///   server's message.
    @discardableResult
    public func removeUser(_ name: String) async throws -> Int {
        try Self.checkRoleName(name)
        return try await withConnection("remove-user") { conn in
            try await bound(conn, "remove-user")
            var spaces = 0
            try await transaction(conn, "remove-user") {
                let role = try await rows(conn, "remove-user", """
                    SELECT pg_catalog.pg_has_role(oid, '\(unescaped: SyncSchema.deviceRole)', 'MEMBER'),
                           rolsuper OR rolcreaterole OR rolbypassrls OR rolreplication,
                           rolname IN (current_user, session_user)
                    FROM pg_catalog.pg_roles WHERE rolname = \(name)::text::name
                    """
                ) { try $0.decode((Bool, Bool, Bool).self) }
                guard let found = role.first else { throw SettingsSyncError.admin("remove-user: no role \(name): nothing removed") }
                let (member, privileged, itself) = found
                guard !itself else { throw SettingsSyncError.admin("remove-user: \(name) is the administrator connected: nothing removed") }
                guard !privileged else {
                    throw SettingsSyncError.admin("remove-user: \(name) is a superuser or has CREATEROLE, BYPASSRLS or REPLICATION, not a sync user: nothing removed")
                }
                guard member else { throw SettingsSyncError.admin("remove-user: \(name) is not a sync user (a member of \(SyncSchema.deviceRole)): nothing removed") }
                spaces = try await rows(
                    conn, "remove-user", "WITH gone AS (DELETE FROM settings_sync.settings_sync_spaces WHERE owner = \(name)::text::name RETURNING 1) SELECT count(*)::int FROM gone"
                ) { try $0.decode(Int.self) }.last ?? 0
                // Its devices' sessions end now, not when they next disconnect.
                _ = try await rows(conn, "remove-user", "SELECT count(pg_catalog.pg_terminate_backend(pid, 5000)) FROM pg_catalog.pg_stat_activity WHERE usename = \(name)::text::name") { _ in () }
                let drop = try await rows(conn, "remove-user", "SELECT format('DROP ROLE %I', \(name)::text)") { try $0.decode(String.self) }
                _ = try await rows(conn, "remove-user", PostgresQuery(unsafeSQL: drop.last ?? "")) { _ in () }
            }
            return spaces
        }
    }

    /// Drops the tombstones that every device seen within `keep` has applied, in every space.
    /// A device whose cursor is older then downloads its space again in full. Run it from cron.
    ///
    /// - Parameter days: how long a silent device counts (default 90).
    /// - Returns: how many tombstones were dropped.
    /// - Throws: ``SettingsSyncError/admin(_:)`` for negative days, or naming the statement that
    ///   failed and the server's message.
    @discardableResult
    public func purge(keepingDays days: Int = 90) async throws -> Int {
        guard days >= 0 else { throw SettingsSyncError.admin("days must be 0 or more") }
        return try await withConnection("purge") { conn in
            try await rows(conn, "purge", "SELECT settings_sync.settings_sync_purge(make_interval(days => \(Int32(clamping: days))))::int") {
                try $0.decode(Int.self)
            }.last ?? 0
        }
    }

    /// Verifies that the separation is in force, and describes what each role can see.
    ///
    /// Checks: the schema version; row-level security enabled and forced on every table with the
    /// `session_user` policy; no table or function rights for `PUBLIC`; devices may only `SELECT`
    /// and call the three device functions, which are `SECURITY DEFINER`; every function and table
    /// is owned by `settings_sync_owner`, which is no superuser, has no attributes and no members;
    /// every function runs with `search_path = pg_catalog, pg_temp`; no schema in a function's
    /// path, nor `settings_sync`, is writable by `PUBLIC` or a login role other than a superuser;
    /// no sync function is left outside `settings_sync` (a version-2 install's, in `public`).
    ///
    /// A lock wait (another session altering a table) is bounded by 30 s.
    ///
    /// - Returns: one line per finding, then one line per user: its spaces, rows and bytes.
    /// - Throws: ``SettingsSyncError/admin(_:)`` listing what is wrong, or naming the statement
    ///   that failed and the server's message (`canceling statement due to lock timeout (55P03)`
    ///   after 30 s), or when the server cannot be reached.
    public func check() async throws -> [String] {
        try await withConnection("check") { conn in
            _ = try await rows(conn, "check", "SELECT set_config('lock_timeout', \(String(Self.milliseconds(lockWait))), false)") { _ in () }
            _ = try await rows(conn, "check", "SELECT pg_catalog.set_config('search_path', \(SyncSchema.functionSearchPath), false)") { _ in () }
            let schema = SyncSchema.schema, owner = SyncSchema.ownerRole, deviceRole = SyncSchema.deviceRole
            var problems: [String] = []
            var lines: [String] = []
            // Left by a version-2 install: SECURITY DEFINER functions with `public` in their path.
            let strays = try await rows(conn, "check", """
                SELECT p.oid::regprocedure::text FROM pg_proc p
                 WHERE p.proname IN ('settings_sync_open', 'settings_sync_push', 'settings_sync_check_in', 'settings_sync_purge', 'settings_sync_space_quota')
                   AND p.pronamespace <> coalesce(to_regnamespace('\(unescaped: schema)')::oid, 0::oid) ORDER BY 1
                """
            ) { try $0.decode(String.self) }
            for stray in strays { problems.append("\(stray): a sync function outside schema \(schema): run settings-sync-admin install") }
            let hasMeta = try await rows(conn, "check", "SELECT to_regclass('\(unescaped: schema).settings_sync_meta') IS NOT NULL") {
                try $0.decode(Bool.self)
            }.last ?? false
            let version = hasMeta ? try await rows(
                conn, "check", "SELECT coalesce(max(version), 0) FROM \(unescaped: schema).settings_sync_meta"
            ) { try $0.decode(Int32.self) }.last ?? 0 : 0
            guard version == SyncSchema.version else {
                problems.insert("schema version \(version), expected \(SyncSchema.version): run settings-sync-admin install", at: 0)
                throw SettingsSyncError.admin(problems.joined(separator: "; "))
            }
            lines.append("schema version \(version)")
            let ownerRow = try await rows(conn, "check", """
                SELECT rolsuper OR rolcanlogin OR rolcreaterole OR rolcreatedb OR rolbypassrls OR rolreplication,
                       EXISTS (SELECT 1 FROM pg_auth_members m WHERE m.roleid = r.oid OR m.member = r.oid)
                FROM pg_roles r WHERE rolname = '\(unescaped: owner)'
                """
            ) { try $0.decode((Bool, Bool).self) }
            if let found = ownerRow.first {
                let (attributes, memberships) = found
                if attributes { problems.append("\(owner): has role attributes (superuser, login, …): run settings-sync-admin install") }
                if memberships { problems.append("\(owner): is a member of a role or has members: run settings-sync-admin install") }
            } else {
                problems.append("\(owner): missing")
            }
            let schemaOwner = try await rows(conn, "check", "SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = '\(unescaped: schema)'") {
                try $0.decode(String.self)
            }
            if schemaOwner.first != owner { problems.append("schema \(schema): owned by \(schemaOwner.first ?? "nobody"), expected \(owner)") }
            var schemasToCheck: Set<String> = [schema]
            for table in SyncSchema.tables {
                let exists = try await rows(conn, "check", "SELECT to_regclass('\(unescaped: schema).\(unescaped: table)') IS NOT NULL") { try $0.decode(Bool.self) }
                guard exists.first == true else { problems.append("\(table): missing"); continue }
                let rls = try await rows(
                    conn, "check", "SELECT relrowsecurity, relforcerowsecurity, relowner::regrole::text FROM pg_class WHERE oid = '\(unescaped: schema).\(unescaped: table)'::regclass"
                ) { try $0.decode((Bool, Bool, String).self) }.last ?? (false, false, "")
                if !(rls.0 && rls.1) { problems.append("\(table): row-level security not enabled and forced") }
                if rls.2 != owner { problems.append("\(table): owned by \(rls.2), expected \(owner)") }
                let policies = try await rows(
                    conn, "check", "SELECT coalesce(qual, '') FROM pg_policies WHERE schemaname = '\(unescaped: schema)' AND tablename = '\(unescaped: table)'"
                ) { try $0.decode(String.self) }
                let expected = table == "settings_sync_meta" ? "true" : "(owner = SESSION_USER)"
                if policies != [expected] { problems.append("\(table): policies \(policies), expected [\(expected)]") }
                for privilege in ["SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER"] {
                    let device = try await rows(
                        conn, "check", "SELECT has_table_privilege('\(unescaped: deviceRole)', '\(unescaped: schema).\(unescaped: table)', '\(unescaped: privilege)')"
                    ) { try $0.decode(Bool.self) }.last ?? false
                    if device != (privilege == "SELECT") { problems.append("\(table): devices \(device ? "have" : "lack") \(privilege)") }
                }
                let publicRights = try await rows(
                    conn, "check", "SELECT count(*)::int FROM pg_class c, aclexplode(c.relacl) a WHERE c.oid = '\(unescaped: schema).\(unescaped: table)'::regclass AND a.grantee = 0"
                ) { try $0.decode(Int.self) }.last ?? 0
                if publicRights > 0 { problems.append("\(table): PUBLIC has rights") }
            }
            for function in SyncSchema.deviceFunctions + SyncSchema.adminFunctions {
                let row = try await rows(conn, "check", """
                    SELECT prosecdef, coalesce((SELECT substr(c, 13) FROM unnest(proconfig) c WHERE c LIKE 'search\\_path=%'), ''),
                           has_function_privilege('\(unescaped: deviceRole)', p.oid, 'EXECUTE'),
                           EXISTS (SELECT 1 FROM aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a WHERE a.grantee = 0),
                           p.proowner::regrole::text
                    FROM pg_proc p WHERE p.oid = to_regprocedure('\(unescaped: schema).\(unescaped: function)')
                    """
                ) { try $0.decode((Bool, String, Bool, Bool, String).self) }
                guard let found = row.first else { problems.append("\(function): missing"); continue }
                let (definer, path, device, publicCan, functionOwner) = found
                let forDevices = SyncSchema.deviceFunctions.contains(function)
                if forDevices && !definer { problems.append("\(function): not SECURITY DEFINER") }
                if path != SyncSchema.functionSearchPath {
                    problems.append("\(function): search_path is \(path.isEmpty ? "not pinned" : "'\(path)'"), expected '\(SyncSchema.functionSearchPath)'")
                }
                for name in Self.schemaNames(inSearchPath: path) where name != "pg_temp" { schemasToCheck.insert(name) }
                if functionOwner != owner { problems.append("\(function): owned by \(functionOwner), expected \(owner)") }
                if device != forDevices { problems.append("\(function): devices \(device ? "may" : "may not") call it") }
                if publicCan { problems.append("\(function): PUBLIC may call it") }
            }
            // A schema others can create in, in a SECURITY DEFINER function's path, lets them run
            // their own code as the function's owner.
            for name in schemasToCheck.sorted() {
                if name == "$user" { problems.append("a function's search_path holds $user: each user may create that schema"); continue }
                let writers = try await rows(conn, "check", """
                    SELECT EXISTS (SELECT 1 FROM aclexplode(n.nspacl) a WHERE a.grantee = 0 AND a.privilege_type = 'CREATE'),
                           coalesce((SELECT string_agg(r.rolname::text, ', ' ORDER BY r.rolname) FROM pg_roles r
                                      WHERE r.rolcanlogin AND NOT r.rolsuper AND has_schema_privilege(r.oid, n.oid, 'CREATE')), '')
                    FROM pg_namespace n WHERE n.nspname = \(name)::text::name
                    """
                ) { try $0.decode((Bool, String).self) }
                guard let found = writers.first else { continue }
                let (everyone, roles) = found
                if everyone {
                    problems.append("schema \(name) in the sync functions' path is writable by PUBLIC (every role may create objects there): run settings-sync-admin install, or REVOKE CREATE ON SCHEMA \(name) FROM PUBLIC")
                } else if !roles.isEmpty {
                    problems.append("schema \(name) in the sync functions' path is writable by \(roles.count > 200 ? roles.prefix(199) + "…" : roles)")
                }
            }
            lines.append("row-level security forced on \(SyncSchema.tables.count) tables; devices SELECT their own rows and call \(SyncSchema.deviceFunctions.count) functions")
            lines.append("functions run as \(owner) (no superuser) with search_path \(SyncSchema.functionSearchPath); no other role may create in \(schema)")
            let users = try await rows(conn, "check", """
                SELECT r.rolname::text,
                       (SELECT count(*)::int FROM \(unescaped: schema).settings_sync_spaces s WHERE s.owner = r.rolname),
                       (SELECT count(*)::int FROM \(unescaped: schema).settings_sync_entries e WHERE e.owner = r.rolname),
                       (SELECT coalesce(sum(bytes), 0)::bigint FROM \(unescaped: schema).settings_sync_spaces s WHERE s.owner = r.rolname)
                FROM pg_roles r WHERE r.rolname <> '\(unescaped: deviceRole)' AND pg_has_role(r.oid, '\(unescaped: deviceRole)', 'MEMBER')
                  AND NOT r.rolsuper ORDER BY 1
                """
            ) { try $0.decode((String, Int, Int, Int64).self) }
            for (name, spaces, rows, bytes) in users {
                lines.append("user \(name) sees only its own: \(spaces) spaces, \(rows) rows, \(bytes) bytes")
            }
            lines.append("any other role: no table rights, no functions (it sees nothing)")
            if !problems.isEmpty { throw SettingsSyncError.admin(problems.joined(separator: "; ")) }
            return lines
        }
    }

    /// The schema names of a `search_path` setting (`pg_catalog, "my schema", pg_temp`), unquoted.
    static func schemaNames(inSearchPath path: String) -> [String] {
        path.split(separator: ",").map { part in
            let name = part.trimmingCharacters(in: .whitespaces)
            guard name.hasPrefix("\""), name.hasSuffix("\""), name.count >= 2 else { return name }
            return String(name.dropFirst().dropLast()).replacingOccurrences(of: "\"\"", with: "\"")
        }.filter { !$0.isEmpty }
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
        let ok = (1...63).contains(name.utf8.count) && !name.hasPrefix("pg_") && name != SyncSchema.deviceRole && name != SyncSchema.ownerRole
            && name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
            && !("0"..."9").contains(name.unicodeScalars.first ?? "0")
        guard ok else { throw .admin("bad user name \"\(SettingsSyncError.printable(name))\": use 1-63 of a-z, 0-9, _ (not starting with a digit or pg_)") }
    }

    /// Runs `body` on a new administrator connection, closed afterwards. A connection that cannot
    /// be made, and a statement that fails, become ``SettingsSyncError/admin(_:)`` saying which.
    func withConnection<T: Sendable>(_ step: String, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        let conn: PostgresConnection
        do {
            conn = try await server.connect(id: 1, logger: logger)
        } catch {
            throw SettingsSyncError.admin(
                "\(step): cannot connect to \(server.host):\(server.port) as \(server.user), database \(server.database ?? server.user): \(Self.describe(error))")
        }
        do {
            let result = try await body(conn)
            try? await conn.close()
            return result
        } catch let failure as AdminFailure {
            try? await conn.close()
            throw SettingsSyncError.admin(failure.description)
        } catch {
            try? await conn.close()
            throw error
        }
    }

    /// Bounds every statement of `conn` (10 s, 5 s waiting for a lock) and pins its
    /// `search_path` to `pg_catalog, pg_temp`.
    func bound(_ conn: PostgresConnection, _ step: String) async throws(AdminFailure) {
        _ = try await rows(conn, step, """
            SELECT pg_catalog.set_config('statement_timeout', '10s', false), pg_catalog.set_config('lock_timeout', '5s', false),
                   pg_catalog.set_config('search_path', '\(unescaped: SyncSchema.functionSearchPath)', false)
            """
        ) { _ in () }
    }

    /// Runs `query` and decodes its rows with `decode`; any failure (the server's error, a lost
    /// connection, a row that does not decode) is thrown as an ``AdminFailure`` naming `step` and
    /// the statement. Never for a statement that holds a secret.
    func rows<T>(
        _ conn: PostgresConnection, _ step: String, _ query: PostgresQuery, _ decode: (PostgresRow) throws -> T
    ) async throws(AdminFailure) -> [T] {
        do {
            var out: [T] = []
            for try await row in try await conn.query(query, logger: logger) { out.append(try decode(row)) }
            return out
        } catch {
            throw AdminFailure(step: step, statement: query.sql, error: error)
        }
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    func transaction(_ conn: PostgresConnection, _ step: String, _ body: () async throws -> Void) async throws {
        _ = try await rows(conn, step, "BEGIN") { _ in () }
        do {
            try await body()
            _ = try await rows(conn, step, "COMMIT") { _ in () }
        } catch {
            _ = try? await conn.query("ROLLBACK", logger: logger)
            throw error
        }
    }

    /// `duration` in whole milliseconds, at least 1 (PostgreSQL's `lock_timeout` 0 means no limit).
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }
}

/// A statement of ``SettingsSyncAdmin`` that failed: the step, the statement and the server's answer.
struct AdminFailure: Error, CustomStringConvertible {
    let step: String
    let statement: String
    let error: any Error

    /// The server's SQLSTATE, when the server answered.
    var sqlState: String? { (error as? PSQLError)?.serverInfo?[.sqlState] }

    /// A lock not granted within `lock_timeout` (55P03) or a deadlock (40P01): nothing was changed,
    /// and the step may start over.
    var isLockConflict: Bool { sqlState == "55P03" || sqlState == "40P01" }

    /// `install failed: canceling statement due to lock timeout (55P03); where: SQL statement "LOCK
    /// TABLE ..." ...; statement: DO $$ ...`: the server's message, its detail and where in a
    /// function or `DO` block it happened, and the statement (on one line, cut at 300 characters).
    var description: String {
        var text = "\(step) failed: \(SyncEngine.describe(error))"
        if let info = (error as? PSQLError)?.serverInfo {
            if let detail = info[.detail] { text += "; \(Self.oneLine(detail))" }
            if let context = info[.locationContext] { text += "; where: \(Self.oneLine(context))" }
        }
        let sql = Self.oneLine(statement)
        return text + "; statement: " + (sql.count > 300 ? sql.prefix(299) + "…" : sql)
    }

    /// `text` with every run of white space (new lines too) made one space.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
}
