/// The server schema, version 1: `schema.sql` of the design, one statement per element.
/// Installed idempotently (under an advisory lock, in one transaction) when a device connects
/// to a database without it.
enum SyncSchema {
    static let version = 1
    static let statements: [String] = [
        #"""
CREATE TABLE IF NOT EXISTS settings_sync_meta (version int NOT NULL)
"""#,
        #"""
INSERT INTO settings_sync_meta SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM settings_sync_meta)
"""#,
        #"""
CREATE TABLE IF NOT EXISTS settings_sync_spaces (
  space      text   PRIMARY KEY CHECK (octet_length(space) BETWEEN 1 AND 200),  -- app id (+ user)
  seq        bigint NOT NULL DEFAULT 0,   -- last change number handed out in this space
  purged_seq bigint NOT NULL DEFAULT 0    -- tombstones up to here may be gone: older cursors resync
)
"""#,
        #"""
CREATE TABLE IF NOT EXISTS settings_sync_entries (
  space  text   NOT NULL REFERENCES settings_sync_spaces ON DELETE CASCADE,
  key    text   NOT NULL CHECK (octet_length(key) BETWEEN 1 AND 1024),  -- SettingsKey.path of a leaf
  value  bytea           CHECK (octet_length(value) <= 262144),         -- binary plist; NULL = tombstone
  hlc    bigint NOT NULL,   -- (unix ms << 16) | counter
  device uuid   NOT NULL,   -- writer; breaks hlc ties
  seq    bigint NOT NULL,   -- change number of the push that last changed the row
  PRIMARY KEY (space, key)
)
"""#,
        #"""
CREATE INDEX IF NOT EXISTS settings_sync_entries_changes ON settings_sync_entries (space, seq, key)
"""#,
        #"""
CREATE TABLE IF NOT EXISTS settings_sync_devices (
  space   text        NOT NULL REFERENCES settings_sync_spaces ON DELETE CASCADE,
  device  uuid        NOT NULL,
  cursor  bigint      NOT NULL,          -- highest change number the device has applied
  seen_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (space, device)
)
"""#,
        #"""
CREATE OR REPLACE FUNCTION settings_sync_push(
  p_space text, p_device uuid, p_keys text[], p_values bytea[], p_hlcs bigint[], p_deleted boolean[])
RETURNS TABLE (change_seq bigint, superseded_key text)
LANGUAGE plpgsql AS $$
DECLARE
  v_seq bigint;
  v_max_hlc bigint := (((extract(epoch FROM clock_timestamp()) * 1000)::bigint + 300000) << 16) | 65535;
BEGIN
  IF cardinality(p_keys) > 1000 THEN
    RAISE EXCEPTION 'too many entries in one push: % (at most 1000)', cardinality(p_keys) USING ERRCODE = '54000';
  END IF;
  IF EXISTS (SELECT 1 FROM unnest(p_hlcs) AS h WHERE h > v_max_hlc) THEN
    RAISE EXCEPTION 'entry timestamp is more than 5 minutes ahead of the server clock' USING ERRCODE = '22008';
  END IF;
  -- the space row stays locked until COMMIT, so one space's pushes commit in change-number order
  INSERT INTO settings_sync_spaces AS s (space, seq) VALUES (p_space, 1)
    ON CONFLICT (space) DO UPDATE SET seq = s.seq + 1
    RETURNING s.seq INTO v_seq;
  INSERT INTO settings_sync_entries AS e (space, key, value, hlc, device, seq)
    SELECT p_space, u.k, CASE WHEN u.d THEN NULL ELSE u.v END, u.h, p_device, v_seq
      FROM unnest(p_keys, p_values, p_hlcs, p_deleted) AS u(k, v, h, d)
    ON CONFLICT (space, key) DO UPDATE
      SET value = excluded.value, hlc = excluded.hlc, device = excluded.device, seq = excluded.seq
      WHERE (excluded.hlc, excluded.device) > (e.hlc, e.device)
         OR e.hlc > v_max_hlc;   -- a row planted with a future timestamp does not pin the key forever
  PERFORM pg_notify('settings_sync', v_seq || ' ' || p_device || ' ' || p_space);
  RETURN QUERY
    SELECT v_seq, u.k
      FROM unnest(p_keys, p_hlcs) AS u(k, h)
      JOIN settings_sync_entries AS e ON e.space = p_space AND e.key = u.k
     WHERE (e.hlc, e.device) <> (u.h, p_device);
  IF NOT FOUND THEN change_seq := v_seq; superseded_key := NULL; RETURN NEXT; END IF;
END $$
"""#,
        #"""
CREATE OR REPLACE FUNCTION settings_sync_purge(p_space text, p_keep interval DEFAULT '90 days')
RETURNS bigint LANGUAGE sql AS $$
  WITH safe AS (
    SELECT least(s.seq, coalesce(min(d.cursor) FILTER (WHERE d.seen_at > now() - p_keep), s.seq)) AS seq
      FROM settings_sync_spaces s LEFT JOIN settings_sync_devices d ON d.space = s.space
     WHERE s.space = p_space GROUP BY s.seq),
  gone AS (
    DELETE FROM settings_sync_entries e USING safe
     WHERE e.space = p_space AND e.value IS NULL AND e.seq <= safe.seq
    RETURNING e.seq)
  UPDATE settings_sync_spaces s SET purged_seq = greatest(s.purged_seq, (SELECT coalesce(max(seq), 0) FROM gone))
   WHERE s.space = p_space RETURNING s.purged_seq;
$$
"""#,
    ]
}
