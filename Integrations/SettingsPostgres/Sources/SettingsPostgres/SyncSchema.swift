/// The server schema, version 4: one space per (PostgreSQL login role, app id), sealed off by
/// row-level security. Installed by an administrator (``SettingsSyncAdmin/install()``,
/// `settings-sync-admin install`), never by a device.
///
/// - Every object lives in the schema `settings_sync`, owned by the role `settings_sync_owner`:
///   no login, not a superuser, no role attributes, member of no role. No other role may create
///   anything in that schema (`install` revokes `CREATE` from any that has it).
/// - Every table has row-level security enabled and forced (on its owner too); its one policy
///   admits the rows whose `owner` is `session_user` (the login role of the connection, which a
///   plain role cannot change).
/// - Devices (members of `settings_sync_device`) may only `SELECT` (their own rows, by the policy)
///   and call `settings_sync_open`, `settings_sync_push` and `settings_sync_check_in`. Those run as
///   `settings_sync_owner` (`SECURITY DEFINER`) with `search_path = pg_catalog, pg_temp`: every sync
///   object they use is named with its schema, and built-in functions and operators are found in
///   `pg_catalog` alone (PostgreSQL never looks up functions or operators in `pg_temp`), so an
///   object a user creates elsewhere (`public.cardinality(text[])`) is never run by them. They take
///   the space's owner from `session_user` themselves: a client never names the owner.
/// - Notifications go to a random per-space channel (`settings_sync_` + 32 hex digits), readable
///   only by the owner through the policy, and carry the change number only.
/// - The space total (keys and values) is at most ``SyncLimits/spaceBytes``, and a role has at
///   most ``SyncLimits/spacesPerUser`` spaces: a push or open over either fails with SQLSTATE
///   53400 and stores nothing.
/// - Version 4 has version 3's tables and functions; what changed is the devices' protocol:
///   sealed values (`SSE2`) are bound to their owner, app, key, clock and device, and a secret
///   key's deletion is a sealed value too (``SyncSecrets``). Devices of version 3 and 4 must not
///   share a space (a version-3 device would push over sealed deletions in clear), so the version
///   is checked as for a schema change: an old device finds version 4 and stops, naming both.
enum SyncSchema {
    static let version = 4
    /// The schema of every sync object; only ``ownerRole`` may create in it.
    static let schema = "settings_sync"
    /// The group role whose members are devices.
    static let deviceRole = "settings_sync_device"
    /// The role that owns the schema, its tables and functions: what the `SECURITY DEFINER`
    /// functions run as. Not a superuser, no login, no attributes, member of nothing.
    static let ownerRole = "settings_sync_owner"
    static let tables = ["settings_sync_meta", "settings_sync_spaces", "settings_sync_entries", "settings_sync_devices"]
    /// The functions devices may call, with their argument types (for GRANT and `check`).
    static let deviceFunctions = [
        "settings_sync_open(text)",
        "settings_sync_push(text, uuid, text[], bytea[], bigint[], boolean[])",
        "settings_sync_check_in(text, uuid, bigint)",
    ]
    static let adminFunctions = ["settings_sync_purge(interval)", "settings_sync_space_quota(text)"]
    /// The `search_path` every sync function runs with: built-ins only, temporary objects last.
    static let functionSearchPath = "pg_catalog, pg_temp"

    /// How long one statement of ``statements`` waits for a lock before it fails (SQLSTATE 55P03)
    /// and ``SettingsSyncAdmin/install()`` starts over: well under PostgreSQL's default
    /// `deadlock_timeout` (1 s), so a device is never the victim of a deadlock with an install.
    static let lockTimeout = "200ms"

    /// What every sync user's sessions run with (set on each role by `add-user` and `install`): a
    /// transaction left idle is ended after ``userIdleInTransaction``, a statement after
    /// ``userStatementTimeout``, a lock wait after ``userLockTimeout``. A user may lower them, or
    /// raise them in its own session: ``SettingsSyncAdmin/install()`` does not rely on them, it
    /// ends a sync user's session whose transaction has blocked it for longer than
    /// ``userTransactionLimit``.
    static let userIdleInTransaction = "5s"
    static let userStatementTimeout = "60s"
    static let userLockTimeout = "10s"
    /// The role settings above, as `ALTER ROLE … SET` takes them.
    static let userSettings = [
        ("idle_in_transaction_session_timeout", userIdleInTransaction),
        ("statement_timeout", userStatementTimeout),
        ("lock_timeout", userLockTimeout),
    ]
    /// How old a sync user's transaction must be before an ``SettingsSyncAdmin/install()`` it
    /// blocks ends its session (devices' transactions last milliseconds).
    static let userTransactionLimit: Duration = .seconds(5)

    /// The tables in the order `install` locks them: the order in which devices' statements lock
    /// them (`settings_sync_check_in` its devices row, then the space; `settings_sync_push` the
    /// space, then its entries; `checkSchema` the meta table alone).
    static let lockOrder = ["settings_sync_devices", "settings_sync_spaces", "settings_sync_entries", "settings_sync_meta"]

    /// The sessions of sync users (members of ``deviceRole``, not superusers, not this session)
    /// in this database that hold a lock on a sync table in a transaction older than `age`
    /// milliseconds: the ones `install` ends when they block it.
    static func blockingUserSessions(olderThanMilliseconds age: Int64) -> String {
        """
        SELECT DISTINCT a.pid FROM pg_catalog.pg_locks l
          JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid
          JOIN pg_catalog.pg_roles r ON r.rolname = a.usename
         WHERE l.locktype = 'relation' AND l.database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database())
           AND l.relation IN (SELECT c.oid FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                               WHERE n.nspname IN ('\(schema)', 'public') AND c.relname IN ('\(tables.joined(separator: "', '"))'))
           AND a.xact_start < pg_catalog.now() - make_interval(secs => \(Double(age) / 1000))
           AND a.pid <> pg_catalog.pg_backend_pid() AND NOT r.rolsuper
           AND r.rolname <> '\(deviceRole)' AND pg_catalog.pg_has_role(r.oid, '\(deviceRole)', 'MEMBER')
        """
    }

    /// The install script, run in one transaction. The first statements pin the `search_path`,
    /// bound every lock wait and take every lock the rest needs, before any change: the DDL below
    /// (`ALTER TABLE`, `CREATE POLICY`, `CREATE INDEX`) would otherwise lock the tables one by one,
    /// in an order that deadlocks with devices pushing meanwhile.
    ///
    /// A version-2 schema (in `public`, functions owned by the installing superuser with `public`
    /// in their path) is moved into ``schema`` and its functions in `public` are dropped.
    static let statements: [String] = [
        "SET LOCAL search_path = \(functionSearchPath)",
        "SET LOCAL lock_timeout = '\(lockTimeout)'",
        "SELECT pg_advisory_xact_lock(7370113211)",
        """
        DO $$ DECLARE t text; s text; BEGIN
          FOREACH t IN ARRAY ARRAY['\(lockOrder.joined(separator: "', '"))'] LOOP
            FOREACH s IN ARRAY ARRAY['public', '\(schema)'] LOOP
              IF to_regclass(format('%I.%I', s, t)) IS NOT NULL THEN
                EXECUTE format('LOCK TABLE %I.%I IN ACCESS EXCLUSIVE MODE', s, t);
              END IF;
            END LOOP;
          END LOOP;
        END $$
        """,
        // Version 1 (one space per app, shared by every role) is kept under another name, never dropped.
        """
        DO $$ BEGIN
          IF to_regclass('public.settings_sync_spaces') IS NOT NULL AND NOT EXISTS (
               SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('public.settings_sync_spaces') AND attname = 'owner') THEN
            ALTER TABLE public.settings_sync_entries RENAME TO settings_sync_v1_entries;
            ALTER TABLE public.settings_sync_devices RENAME TO settings_sync_v1_devices;
            ALTER TABLE public.settings_sync_spaces RENAME TO settings_sync_v1_spaces;
            DROP FUNCTION IF EXISTS public.settings_sync_push(text, uuid, text[], bytea[], bigint[], boolean[]);
            DROP FUNCTION IF EXISTS public.settings_sync_purge(text, interval);
            DELETE FROM public.settings_sync_meta;
          END IF;
        END $$
        """,
        "DO $$ BEGIN CREATE ROLE \(deviceRole) NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$",
        // The owner of everything: no attributes, member of nothing. Changed only when it differs
        // (installs in several databases of one cluster would update the shared catalog at once).
        """
        DO $$ DECLARE m record; BEGIN
          BEGIN
            CREATE ROLE \(ownerRole) NOLOGIN NOSUPERUSER NOINHERIT NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
          EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
          END;
          IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '\(ownerRole)' AND (rolcanlogin OR rolsuper OR rolinherit OR rolcreatedb
                     OR rolcreaterole OR rolreplication OR rolbypassrls)) THEN
            ALTER ROLE \(ownerRole) NOLOGIN NOSUPERUSER NOINHERIT NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
          END IF;
          FOR m IN SELECT g.rolname AS grp, u.rolname AS member FROM pg_auth_members a
                     JOIN pg_roles g ON g.oid = a.roleid JOIN pg_roles u ON u.oid = a.member
                    WHERE g.rolname = '\(ownerRole)' OR u.rolname = '\(ownerRole)' LOOP
            BEGIN
              EXECUTE format('REVOKE %I FROM %I', m.grp, m.member);
            EXCEPTION WHEN undefined_object THEN
              NULL;   -- the member was dropped since the loop read it: nothing left to revoke
            END;
          END LOOP;
        END $$
        """,
        // The schema only its owner may create in.
        """
        DO $$ DECLARE g record; BEGIN
          IF to_regnamespace('\(schema)') IS NULL THEN
            CREATE SCHEMA \(schema) AUTHORIZATION \(ownerRole);
          END IF;
          ALTER SCHEMA \(schema) OWNER TO \(ownerRole);
          REVOKE ALL ON SCHEMA \(schema) FROM PUBLIC;
          FOR g IN SELECT DISTINCT a.grantee FROM pg_namespace n, aclexplode(n.nspacl) a
                    WHERE n.nspname = '\(schema)' AND a.grantee NOT IN (0, n.nspowner) LOOP
            EXECUTE format('REVOKE ALL ON SCHEMA \(schema) FROM %I', (SELECT rolname FROM pg_roles WHERE oid = g.grantee));
          END LOOP;
          GRANT USAGE ON SCHEMA \(schema) TO \(deviceRole);
        END $$
        """,
        // Version 2 (in public, functions owned by the installing superuser with public in their
        // search_path) moves into the schema; its functions in public go.
        """
        DO $$ DECLARE t text; BEGIN
          FOREACH t IN ARRAY ARRAY['\(tables.joined(separator: "', '"))'] LOOP
            IF to_regclass('public.' || t) IS NOT NULL AND to_regclass('\(schema).' || t) IS NULL THEN
              EXECUTE format('ALTER TABLE public.%I SET SCHEMA \(schema)', t);
            END IF;
          END LOOP;
          DROP FUNCTION IF EXISTS public.settings_sync_open(text);
          DROP FUNCTION IF EXISTS public.settings_sync_push(text, uuid, text[], bytea[], bigint[], boolean[]);
          DROP FUNCTION IF EXISTS public.settings_sync_check_in(text, uuid, bigint);
          DROP FUNCTION IF EXISTS public.settings_sync_purge(interval);
          DROP FUNCTION IF EXISTS public.settings_sync_space_quota(text);
        END $$
        """,
        "CREATE TABLE IF NOT EXISTS settings_sync.settings_sync_meta (version int NOT NULL)",
        "DELETE FROM settings_sync.settings_sync_meta",
        "INSERT INTO settings_sync.settings_sync_meta VALUES (\(version))",
        """
        CREATE TABLE IF NOT EXISTS settings_sync.settings_sync_spaces (
          owner      name   NOT NULL,                -- the login role (session_user) whose space it is
          app        text   NOT NULL CHECK (octet_length(app) BETWEEN 1 AND 200),
          channel    text   NOT NULL UNIQUE DEFAULT 'settings_sync_' || replace(gen_random_uuid()::text, '-', ''),
          seq        bigint NOT NULL DEFAULT 0,      -- last change number handed out in this space
          purged_seq bigint NOT NULL DEFAULT 0,      -- tombstones up to here may be gone: older cursors resync
          bytes      bigint NOT NULL DEFAULT 0,      -- keys + values stored, at most \(SyncLimits.spaceBytes)
          PRIMARY KEY (owner, app)
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS settings_sync.settings_sync_entries (
          owner  name   NOT NULL,
          app    text   NOT NULL,
          key    text   NOT NULL CHECK (octet_length(key) BETWEEN 1 AND \(SyncLimits.keyBytes)),
          value  bytea           CHECK (octet_length(value) <= \(SyncLimits.valueBytes + SyncSecrets.overhead)),
          hlc    bigint NOT NULL,   -- (unix ms << 16) | counter
          device uuid   NOT NULL,   -- writer; breaks hlc ties
          seq    bigint NOT NULL,   -- change number of the push that last changed the row
          PRIMARY KEY (owner, app, key),
          FOREIGN KEY (owner, app) REFERENCES settings_sync.settings_sync_spaces ON DELETE CASCADE
        )
        """,
        "CREATE INDEX IF NOT EXISTS settings_sync_entries_changes ON settings_sync.settings_sync_entries (owner, app, seq, key)",
        """
        CREATE TABLE IF NOT EXISTS settings_sync.settings_sync_devices (
          owner   name        NOT NULL,
          app     text        NOT NULL,
          device  uuid        NOT NULL,
          cursor  bigint      NOT NULL,          -- highest change number the device has applied
          seen_at timestamptz NOT NULL DEFAULT now(),
          PRIMARY KEY (owner, app, device),
          FOREIGN KEY (owner, app) REFERENCES settings_sync.settings_sync_spaces ON DELETE CASCADE
        )
        """,
        """
        DO $$ DECLARE t text; BEGIN
          FOREACH t IN ARRAY ARRAY['settings_sync_spaces', 'settings_sync_entries', 'settings_sync_devices'] LOOP
            EXECUTE format('ALTER TABLE settings_sync.%I OWNER TO \(ownerRole)', t);
            EXECUTE format('ALTER TABLE settings_sync.%I ENABLE ROW LEVEL SECURITY', t);
            EXECUTE format('ALTER TABLE settings_sync.%I FORCE ROW LEVEL SECURITY', t);
            EXECUTE format('DROP POLICY IF EXISTS settings_sync_own ON settings_sync.%I', t);
            EXECUTE format('CREATE POLICY settings_sync_own ON settings_sync.%I USING (owner = session_user) WITH CHECK (owner = session_user)', t);
            EXECUTE format('REVOKE ALL ON settings_sync.%I FROM PUBLIC', t);
            EXECUTE format('GRANT SELECT ON settings_sync.%I TO \(deviceRole)', t);
          END LOOP;
          ALTER TABLE settings_sync.settings_sync_meta OWNER TO \(ownerRole);
          ALTER TABLE settings_sync.settings_sync_meta ENABLE ROW LEVEL SECURITY;
          ALTER TABLE settings_sync.settings_sync_meta FORCE ROW LEVEL SECURITY;
          DROP POLICY IF EXISTS settings_sync_read ON settings_sync.settings_sync_meta;
          CREATE POLICY settings_sync_read ON settings_sync.settings_sync_meta FOR SELECT USING (true);
          REVOKE ALL ON settings_sync.settings_sync_meta FROM PUBLIC;
          GRANT SELECT ON settings_sync.settings_sync_meta TO \(deviceRole);
        END $$
        """,
        // A role has at most SyncLimits.spacesPerUser spaces (apps): one user cannot fill the database.
        """
        CREATE OR REPLACE FUNCTION settings_sync.settings_sync_space_quota(p_app text) RETURNS void
        LANGUAGE plpgsql SET search_path = \(functionSearchPath) AS $$
        BEGIN
          IF NOT EXISTS (SELECT 1 FROM settings_sync.settings_sync_spaces WHERE owner = session_user AND app = p_app)
             AND (SELECT count(*) FROM settings_sync.settings_sync_spaces WHERE owner = session_user) >= \(SyncLimits.spacesPerUser) THEN
            RAISE EXCEPTION 'too many sync spaces for this role (at most \(SyncLimits.spacesPerUser) apps)' USING ERRCODE = '53400';
          END IF;
        END $$
        """,
        // The caller's space, created on first use; its channel is the caller's secret.
        """
        CREATE OR REPLACE FUNCTION settings_sync.settings_sync_open(p_app text)
        RETURNS TABLE (channel text, seq bigint, purged_seq bigint)
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = \(functionSearchPath) AS $$
        BEGIN
          PERFORM settings_sync.settings_sync_space_quota(p_app);
          INSERT INTO settings_sync.settings_sync_spaces (owner, app) VALUES (session_user, p_app) ON CONFLICT DO NOTHING;
          RETURN QUERY SELECT s.channel, s.seq, s.purged_seq FROM settings_sync.settings_sync_spaces s
            WHERE s.owner = session_user AND s.app = p_app;
        END $$
        """,
        // One push = one transaction = one change number, in the caller's space only. Returns the
        // change number, and the pushed keys whose stored entry is not the pushed one (a newer
        // write won). An exact retry stores nothing and reports nothing superseded.
        """
        CREATE OR REPLACE FUNCTION settings_sync.settings_sync_push(
          p_app text, p_device uuid, p_keys text[], p_values bytea[], p_hlcs bigint[], p_deleted boolean[])
        RETURNS TABLE (change_seq bigint, superseded_key text)
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = \(functionSearchPath) AS $$
        DECLARE
          v_owner name := session_user;
          v_seq bigint;
          v_bytes bigint;
          v_channel text;
          v_delta bigint;
          v_max_hlc bigint := (((extract(epoch FROM clock_timestamp()) * 1000)::bigint + \(SyncLimits.futureMs)) << 16) | 65535;
        BEGIN
          IF cardinality(p_keys) > \(SyncLimits.pushBatch) THEN
            RAISE EXCEPTION 'too many entries in one push: % (at most \(SyncLimits.pushBatch))', cardinality(p_keys) USING ERRCODE = '54000';
          END IF;
          IF cardinality(p_values) <> cardinality(p_keys) OR cardinality(p_hlcs) <> cardinality(p_keys)
             OR cardinality(p_deleted) <> cardinality(p_keys) THEN
            RAISE EXCEPTION 'push arrays differ in length' USING ERRCODE = '22023';
          END IF;
          IF EXISTS (SELECT 1 FROM unnest(p_hlcs) AS h WHERE h > v_max_hlc) THEN
            RAISE EXCEPTION 'entry timestamp is more than 5 minutes ahead of the server clock' USING ERRCODE = '22008';
          END IF;
          PERFORM settings_sync.settings_sync_space_quota(p_app);
          -- the space row stays locked until COMMIT, so one space's pushes commit in change-number order
          INSERT INTO settings_sync.settings_sync_spaces AS s (owner, app, seq) VALUES (v_owner, p_app, 1)
            ON CONFLICT (owner, app) DO UPDATE SET seq = s.seq + 1
            RETURNING s.seq, s.bytes, s.channel INTO v_seq, v_bytes, v_channel;
          SELECT coalesce(sum(octet_length(u.k) + CASE WHEN u.d THEN 0 ELSE coalesce(octet_length(u.v), 0) END
                              - coalesce(octet_length(e.key) + coalesce(octet_length(e.value), 0), 0)), 0)
            INTO v_delta
            FROM unnest(p_keys, p_values, p_hlcs, p_deleted) AS u(k, v, h, d)
            LEFT JOIN settings_sync.settings_sync_entries AS e ON e.owner = v_owner AND e.app = p_app AND e.key = u.k
           WHERE e.key IS NULL OR (u.h, p_device) > (e.hlc, e.device) OR e.hlc > v_max_hlc;
          IF v_delta > 0 AND v_bytes + v_delta > \(SyncLimits.spaceBytes) THEN
            RAISE EXCEPTION 'space full: % bytes stored, this push adds %, the limit is \(SyncLimits.spaceBytes)', v_bytes, v_delta
              USING ERRCODE = '53400';
          END IF;
          UPDATE settings_sync.settings_sync_spaces SET bytes = greatest(bytes + v_delta, 0) WHERE owner = v_owner AND app = p_app;
          INSERT INTO settings_sync.settings_sync_entries AS e (owner, app, key, value, hlc, device, seq)
            SELECT v_owner, p_app, u.k, CASE WHEN u.d THEN NULL ELSE u.v END, u.h, p_device, v_seq
              FROM unnest(p_keys, p_values, p_hlcs, p_deleted) AS u(k, v, h, d)
            ON CONFLICT (owner, app, key) DO UPDATE
              SET value = excluded.value, hlc = excluded.hlc, device = excluded.device, seq = excluded.seq
              WHERE (excluded.hlc, excluded.device) > (e.hlc, e.device)
                 OR e.hlc > v_max_hlc;   -- a row planted with a future timestamp does not pin the key forever
          PERFORM pg_notify(v_channel, v_seq::text);
          RETURN QUERY
            SELECT v_seq, u.k
              FROM unnest(p_keys, p_hlcs) AS u(k, h)
              JOIN settings_sync.settings_sync_entries AS e ON e.owner = v_owner AND e.app = p_app AND e.key = u.k
             WHERE (e.hlc, e.device) <> (u.h, p_device);
          IF NOT FOUND THEN change_seq := v_seq; superseded_key := NULL; RETURN NEXT; END IF;
        END $$
        """,
        """
        CREATE OR REPLACE FUNCTION settings_sync.settings_sync_check_in(p_app text, p_device uuid, p_cursor bigint)
        RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = \(functionSearchPath) AS $$
        BEGIN
          IF NOT EXISTS (SELECT 1 FROM settings_sync.settings_sync_spaces WHERE owner = session_user AND app = p_app) THEN
            RETURN;
          END IF;
          -- A space keeps its \(SyncLimits.devicesPerSpace) most recently seen devices: made-up device ids
          -- replace the user's own oldest rows, they never grow the table.
          IF NOT EXISTS (SELECT 1 FROM settings_sync.settings_sync_devices
                          WHERE owner = session_user AND app = p_app AND device = p_device) THEN
            DELETE FROM settings_sync.settings_sync_devices
             WHERE owner = session_user AND app = p_app AND device IN (
                   SELECT device FROM settings_sync.settings_sync_devices WHERE owner = session_user AND app = p_app
                    ORDER BY seen_at DESC, device OFFSET \(SyncLimits.devicesPerSpace - 1));
          END IF;
          INSERT INTO settings_sync.settings_sync_devices AS d (owner, app, device, cursor)
            VALUES (session_user, p_app, p_device, p_cursor)
          ON CONFLICT (owner, app, device) DO UPDATE
            SET cursor = greatest(d.cursor, excluded.cursor), seen_at = now();
        END $$
        """,
        // Administrators only (cron): drops the tombstones that every device seen within p_keep
        // has applied, in every space; returns how many.
        """
        CREATE OR REPLACE FUNCTION settings_sync.settings_sync_purge(p_keep interval DEFAULT '90 days')
        RETURNS bigint LANGUAGE plpgsql SET search_path = \(functionSearchPath) AS $$
        DECLARE
          r record;
          v_safe bigint;
          v_max bigint;
          v_count bigint;
          v_freed bigint;
          v_total bigint := 0;
        BEGIN
          FOR r IN SELECT owner, app, seq FROM settings_sync.settings_sync_spaces FOR UPDATE LOOP
            SELECT least(r.seq, coalesce(min(d.cursor) FILTER (WHERE d.seen_at > now() - p_keep), r.seq)) INTO v_safe
              FROM settings_sync.settings_sync_devices d WHERE d.owner = r.owner AND d.app = r.app;
            WITH gone AS (
              DELETE FROM settings_sync.settings_sync_entries e
               WHERE e.owner = r.owner AND e.app = r.app AND e.value IS NULL AND e.seq <= v_safe
              RETURNING e.seq, octet_length(e.key) AS size)
            SELECT max(seq), count(*), coalesce(sum(size), 0) INTO v_max, v_count, v_freed FROM gone;
            IF v_count > 0 THEN
              UPDATE settings_sync.settings_sync_spaces SET purged_seq = greatest(purged_seq, v_max), bytes = greatest(bytes - v_freed, 0)
               WHERE owner = r.owner AND app = r.app;
              v_total := v_total + v_count;
            END IF;
          END LOOP;
          RETURN v_total;
        END $$
        """,
        """
        DO $$ BEGIN
          REVOKE ALL ON FUNCTION settings_sync.settings_sync_open(text) FROM PUBLIC;
          REVOKE ALL ON FUNCTION settings_sync.settings_sync_push(text, uuid, text[], bytea[], bigint[], boolean[]) FROM PUBLIC;
          REVOKE ALL ON FUNCTION settings_sync.settings_sync_check_in(text, uuid, bigint) FROM PUBLIC;
          REVOKE ALL ON FUNCTION settings_sync.settings_sync_purge(interval) FROM PUBLIC;
          REVOKE ALL ON FUNCTION settings_sync.settings_sync_space_quota(text) FROM PUBLIC;
          GRANT EXECUTE ON FUNCTION settings_sync.settings_sync_open(text) TO \(deviceRole);
          GRANT EXECUTE ON FUNCTION settings_sync.settings_sync_push(text, uuid, text[], bytea[], bigint[], boolean[]) TO \(deviceRole);
          GRANT EXECUTE ON FUNCTION settings_sync.settings_sync_check_in(text, uuid, bigint) TO \(deviceRole);
          ALTER FUNCTION settings_sync.settings_sync_open(text) OWNER TO \(ownerRole);
          ALTER FUNCTION settings_sync.settings_sync_push(text, uuid, text[], bytea[], bigint[], boolean[]) OWNER TO \(ownerRole);
          ALTER FUNCTION settings_sync.settings_sync_check_in(text, uuid, bigint) OWNER TO \(ownerRole);
          ALTER FUNCTION settings_sync.settings_sync_purge(interval) OWNER TO \(ownerRole);
          ALTER FUNCTION settings_sync.settings_sync_space_quota(text) OWNER TO \(ownerRole);
        END $$
        """,
        // Every sync user's sessions get the bounds of userSettings (where they differ: the roles
        // are shared by every database of the cluster).
        """
        DO $$ DECLARE r record; BEGIN
          FOR r IN SELECT u.rolname, c.name, c.value FROM pg_roles u,
                          (VALUES \(userSettings.map { "('\($0.0)', '\($0.1)')" }.joined(separator: ", "))) AS c(name, value)
                    WHERE u.rolname NOT IN ('\(deviceRole)', '\(ownerRole)') AND NOT u.rolsuper
                      AND pg_has_role(u.oid, '\(deviceRole)', 'MEMBER')
                      AND NOT EXISTS (SELECT 1 FROM pg_db_role_setting s WHERE s.setrole = u.oid AND s.setdatabase = 0
                                        AND c.name || '=' || c.value = ANY (s.setconfig)) LOOP
            BEGIN
              EXECUTE format('ALTER ROLE %I SET %I = %L', r.rolname, r.name, r.value);
            EXCEPTION WHEN unique_violation OR internal_error THEN
              NULL;   -- an install in another database of the cluster set it at the same moment
            WHEN undefined_object THEN
              NULL;   -- the role was dropped (remove-user, in any database) since the loop read it
            END;
          END LOOP;
        END $$
        """,
    ]
}
