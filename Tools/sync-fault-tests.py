#!/usr/bin/env python3
"""Fault tests of SettingsPostgres sync: devices are `settings-sync-device` processes (each with its own
settings file and config home), outages come from a loopback TCP proxy in this script (drop, refuse,
black-hole) and from `pg_ctl stop -m immediate` / start. Runs inside the package's throwaway server
(Integrations/SettingsPostgres/Scripts/test-server.sh, which provisions the sync user `settings`;
rows are read and planted as the administrator it exports):

  Scripts/test-server.sh python3 ../../Tools/sync-fault-tests.py all [--small]
  Scripts/test-server.sh python3 ../../Tools/sync-fault-tests.py TEST [--small] [--seed N] [--bin DIR]

TEST is one of:
  proxy      the proxy itself, checked with psql (pass, drop, refuse, black-hole)
  converge   4 devices x 1,000 writes (100 shared keys + unique keys), connections dropped every 2 s,
             one server restart: 0 acknowledged writes lost, identical user layers, newest write wins
             (judged by write times: a key's winner must not be older than another device's last
             write of it by more than --tie-ms; all devices share one clock)
  latency    a write on A seen by B's `watch` (origin .sync), 1,000 writes: p50 <= 100 ms, p99 <= 250 ms
  offline    both devices offline (proxy refuses), 100 edits each, reconnect: converged <= 2 s;
             the same after a 10 s server stop: <= 3 s
  bulk       10,000 keys: upload <= 3 s; a fresh device's download + apply + durable <= 2 s
  kill       200 SIGKILLs of a writing device at random moments: 0 acknowledged writes lost (server,
             the device, a fresh device), no write applied twice or out of order (a watching device)
  badrows    100 hostile rows planted with psql (bad keys, garbage values, future clocks) among good
             rows: no crash, good rows applied, bad ones skipped and (when printed) reported once
  toolarge   a 300 KiB value put into the settings file: reported as too large, the other keys sync
  redial     a writing device's connection dropped 50 times at random moments: back <= 5 s each time,
             no acknowledged write lost
  takeover   two `sync` processes on one file: the standby is up to date <= 2 s after the active dies
  blackhole  the proxy black-holes the connection: the device syncs again <= 20 s after it passes

--small runs CI counts (converge 4 x 100 with 20 shared keys, latency 200, bulk 2,000, kill 20,
redial 10 drops, takeover 2 rounds); the default runs the full counts of issue 13. One line per test with its figures
and PASS/FAIL; exit status 1 when any test failed. BIN is the directory holding settings-sync-device
(default: Integrations/SettingsPostgres/.build/debug, else `swift build --show-bin-path` there).
Work directories of failed tests are kept and printed.
"""
import argparse
import json
import math
import os
import plistlib
import random
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "Integrations", "SettingsPostgres")
VALUE = re.compile(r"([A-Za-z0-9_-]+):(\d+):(\d+)")


class TestFailure(Exception):
    """A test could not go on (a process failed or a wait timed out); the message says which."""


# --------------------------------------------------------------------------------------------- proxy

class _Conn:
    """One proxied connection: a client socket, an upstream socket and one pump thread per direction."""

    def __init__(self, proxy, client, blackholed, number):
        self.proxy = proxy
        self.client = client
        self.upstream = None
        self.blackholed = blackholed
        self.closed = False
        self.lock = threading.Lock()
        self.number = number
        self.opened_ns = time.time_ns()
        self.closed_ns = None
        self.why = ""
        self.sent = [0, 0]        # bytes client -> server, server -> client
        self.last = [0, 0]        # ns of the last chunk each way

    def start(self):
        if not self.blackholed:
            try:
                self.upstream = socket.create_connection(self.proxy.target, timeout=2)
                self.upstream.settimeout(None)
                self.upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                self.close(reset=True, why="server unreachable")   # the client sees its connection reset
                return
        threading.Thread(target=self._pump, args=(True,), daemon=True).start()
        if self.upstream is not None:
            threading.Thread(target=self._pump, args=(False,), daemon=True).start()

    def _pump(self, from_client):
        src = self.client if from_client else self.upstream
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                data = b""
            if not data:
                break
            if self.blackholed:
                continue                 # read and forget: nothing reaches the other side
            dst = self.upstream if from_client else self.client
            try:
                dst.sendall(data)
            except OSError:
                if self.blackholed:
                    continue
                break
            way = 0 if from_client else 1
            self.sent[way] += len(data)
            self.last[way] = time.time_ns()
        if self.blackholed and not from_client:
            return                       # a black hole keeps the client hanging even if the server goes
        self.close(why="client closed" if from_client else "server closed")

    def close(self, reset=False, why=""):
        with self.lock:
            if self.closed:
                return
            self.closed = True
            self.closed_ns = time.time_ns()
            self.why = why
        for s in (self.client, self.upstream):
            if s is None:
                continue
            try:
                if reset:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    s.shutdown(socket.SHUT_RD)   # wakes the pump; close() then sends RST
                else:
                    s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                s.close()
            except OSError:
                pass
        self.proxy._forget(self)


class Proxy:
    """A loopback TCP proxy to the PostgreSQL server with four behaviours:
    pass (forward), refuse (listening socket closed: new connections get ECONNREFUSED, open ones are
    reset), blackhole (accept, forward nothing; open connections go silent for good, as a half-open
    link would), and drop_all() (close both sides of every open connection)."""

    def __init__(self, target_host, target_port):
        self.target = (target_host, target_port)
        self.mode = "pass"
        self.conns = set()
        self.lock = threading.Lock()
        self.listener = None
        self.port = 0
        self.accepted = 0
        self.drops = 0
        self.stopped = False
        self.history = []         # every connection, for the log
        self.events = []          # (ns, what)
        self.state = threading.Condition()
        self.listening = False
        self._listen()
        self.thread = threading.Thread(target=self._accept_loop, daemon=True)
        self.thread.start()

    def _listen(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", self.port))
        s.listen(128)
        s.settimeout(0.05)
        self.listener = s
        self.port = s.getsockname()[1]
        self.listening = True

    def url(self, base_url):
        """base_url with its host and port replaced by the proxy's."""
        parts = urllib.parse.urlsplit(base_url)
        netloc = parts.netloc
        userinfo = netloc.rsplit("@", 1)[0] + "@" if "@" in netloc else ""
        return urllib.parse.urlunsplit(parts._replace(netloc=f"{userinfo}127.0.0.1:{self.port}"))

    def _accept_loop(self):
        while not self.stopped:
            mode = self.mode
            if mode == "refuse":
                if self.listener is not None:
                    self.listener.close()
                    self.listener = None
                    with self.state:
                        self.listening = False
                        self.state.notify_all()
                time.sleep(0.01)
                continue
            if self.listener is None:
                try:
                    self._listen()
                except OSError:
                    time.sleep(0.05)
                    continue
                with self.state:
                    self.state.notify_all()
            try:
                client, _ = self.listener.accept()
            except (socket.timeout, OSError):
                continue
            client.settimeout(None)
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                self.accepted += 1
                conn = _Conn(self, client, blackholed=(self.mode == "blackhole"), number=self.accepted)
                self.conns.add(conn)
                self.history.append(conn)
            threading.Thread(target=conn.start, daemon=True).start()
        if self.listener is not None:
            self.listener.close()

    def _forget(self, conn):
        with self.lock:
            self.conns.discard(conn)

    def _open(self):
        with self.lock:
            return list(self.conns)

    def set_mode(self, mode):
        """Switches behaviour; returns once the listening socket matches it."""
        assert mode in ("pass", "refuse", "blackhole")
        self.mode = mode
        self.events.append((time.time_ns(), f"mode {mode}"))
        if mode == "refuse":
            for c in self._open():
                c.close(reset=True, why="refuse")
        elif mode == "blackhole":
            for c in self._open():
                c.blackholed = True
        want = mode != "refuse"
        with self.state:
            if not self.state.wait_for(lambda: self.listening == want, timeout=5):
                raise TestFailure(f"proxy: could not {'listen on' if want else 'close'} port {self.port}")

    def drop_all(self):
        """Closes both sides of every open connection (FIN); returns how many."""
        conns = [c for c in self._open() if not c.blackholed]
        for c in conns:
            c.close(why="dropped")
        self.drops += 1
        self.events.append((time.time_ns(), f"drop ({len(conns)} connections)"))
        return len(conns)

    def close(self, log_path=None):
        self.stopped = True
        for c in self._open():
            c.close(why="proxy closed")
        self.thread.join(timeout=2)
        if log_path:
            self.write_log(log_path)

    def write_log(self, path):
        """One line per event and per connection (opened, closed, why, bytes and last traffic each
        way), in time order: which connection hung, and what the proxy did to it."""
        lines = [(ns, f"{ns} proxy {what}") for ns, what in self.events]
        for c in self.history:
            lines.append((c.opened_ns, f"{c.opened_ns} conn {c.number} opened{' blackholed' if c.blackholed else ''}"))
            if c.closed_ns:
                lines.append((c.closed_ns, f"{c.closed_ns} conn {c.number} closed ({c.why}): {c.sent[0]} bytes up "
                                           f"(last {c.last[0]}), {c.sent[1]} down (last {c.last[1]})"))
            else:
                lines.append((time.time_ns(), f"{time.time_ns()} conn {c.number} still open: {c.sent[0]} bytes up "
                                              f"(last {c.last[0]}), {c.sent[1]} down (last {c.last[1]})"))
        with open(path, "w") as f:
            f.writelines(line + "\n" for _, line in sorted(lines))


# -------------------------------------------------------------------------------------- processes

class Proc:
    """A device process; every stdout line is kept with the wall-clock ns at which it was read."""

    def __init__(self, argv, env, label, log_dir):
        self.label = label
        self.argv = argv
        self.started_ns = time.time_ns()
        self.err_path = os.path.join(log_dir, f"{label}.stderr")
        self.err_file = open(self.err_path, "wb")
        self.p = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.err_file)
        self.lines = []
        self.cond = threading.Condition()
        self.eof = False
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for raw in self.p.stdout:
            ns = time.time_ns()
            with self.cond:
                self.lines.append((ns, raw.decode(errors="replace").rstrip("\n")))
                self.cond.notify_all()
        with self.cond:
            self.eof = True
            self.cond.notify_all()

    def wait_line(self, pred, timeout, start=0):
        """The first (index, ns, line) at or after index `start` with pred(line), or None after timeout
        or when the process ended without one."""
        deadline = time.monotonic() + timeout
        with self.cond:
            i = start
            while True:
                while i < len(self.lines):
                    ns, line = self.lines[i]
                    if pred(line):
                        return i, ns, line
                    i += 1
                left = deadline - time.monotonic()
                if self.eof or left <= 0:
                    return None
                self.cond.wait(timeout=min(left, 0.2))

    def wait_until(self, pred_lines, timeout):
        """Waits until pred_lines(lines) is true; returns it."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                if pred_lines(self.lines):
                    return True
                left = deadline - time.monotonic()
                if self.eof or left <= 0:
                    return pred_lines(self.lines)
                self.cond.wait(timeout=min(left, 0.2))

    def snapshot(self):
        with self.cond:
            return list(self.lines)

    def stderr(self):
        if not self.err_file.closed:
            self.err_file.flush()
        with open(self.err_path, "rb") as f:
            return f.read().decode(errors="replace")

    def alive(self):
        return self.p.poll() is None

    def wait(self, timeout):
        try:
            code = self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise TestFailure(f"{self.label} did not finish in {timeout:.0f}s: {self.tail()}")
        self.reader.join(timeout=5)
        self.save()
        return code

    def kill(self, sig=signal.SIGKILL):
        if self.p.poll() is None:
            try:
                self.p.send_signal(sig)
            except ProcessLookupError:
                pass

    def stop(self, grace=3.0):
        """SIGTERM (and stdin closed), then SIGKILL after `grace` seconds."""
        if self.p.poll() is None:
            try:
                self.p.stdin.close()
            except OSError:
                pass
            self.kill(signal.SIGTERM)
            try:
                self.p.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.kill()
                self.p.wait(timeout=5)
        self.reader.join(timeout=5)
        self.err_file.close()
        self.save()

    def save(self):
        """Keeps stdout beside stderr in the device's directory, for a look after a failure."""
        with open(self.err_path[:-len(".stderr")] + ".stdout", "w") as f:
            f.writelines(f"{ns} {line}\n" for ns, line in self.snapshot())

    def tail(self):
        out = " | ".join(line for _, line in self.snapshot()[-3:])
        err = self.stderr().strip().splitlines()[-3:]
        return f"exit {self.p.poll()}, stdout: {out[:300]!r}, stderr: {' | '.join(err)[:400]!r}"


class Device:
    """One simulated machine: its own settings file, config home and device id."""

    def __init__(self, h, name, app, url):
        self.h = h
        self.name = name
        self.app = app
        self.url = url
        self.dir = os.path.join(h.work, name)
        os.makedirs(os.path.join(self.dir, "config"), exist_ok=True)
        self.file = os.path.join(self.dir, "settings.plist")
        self.env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(self.dir, "config"), HOME=self.dir,
                        SETTINGS_PG_URL=url)
        self.runs = 0

    def start(self, command, *args):
        self.runs += 1
        argv = [self.h.tool, command, "--file", self.file, "--app", self.app, "--url", self.url,
                *[str(a) for a in args]]
        p = Proc(argv, self.env, f"{self.name}-{self.runs}-{command}", self.dir)
        self.h.procs.append(p)
        return p

    def run(self, command, *args, timeout=120):
        p = self.start(command, *args)
        code = p.wait(timeout)
        return p, code

    def dump(self, timeout=60):
        """The device's user layer after syncing up to date, and the seconds the process took."""
        t0 = time.monotonic()
        p, code = self.run("dump", "--timeout", timeout, timeout=timeout + 30)
        elapsed = time.monotonic() - t0
        if code != 0:
            raise TestFailure(f"{self.name} dump failed: {p.tail()}")
        for _, line in p.snapshot():
            if line.startswith("{"):
                return json.loads(line), elapsed, p
        raise TestFailure(f"{self.name} dump printed no JSON line: {p.tail()}")


def parse_value(text):
    """("tag", i, ns) from a value "tag:i:ns", or None."""
    m = VALUE.search(text or "")
    return (m.group(1), int(m.group(2)), int(m.group(3))) if m else None


def acks(proc):
    return [int(line.split()[1]) for _, line in proc.snapshot() if line.startswith("ACK ") and
            line.split()[1].isdigit()]


def done(proc):
    return any(line == "DONE" for _, line in proc.snapshot())


DICT_ENTRY = re.compile(r'"((?:[^"\\]|\\.)*)": "((?:[^"\\]|\\.)*)"')


def recvs_of(lines):
    """[(key, recv_ns, value)] from a watch process's lines. A change that created a dictionary is
    announced at the dictionary's key, with the dictionary as its value (`["k0": "v", ...]`): it is
    expanded into its leaves."""
    out = []
    for _, line in lines:
        if line.startswith("RECV "):
            parts = line.split(" ", 3)
            if len(parts) == 4 and parts[2].isdigit():
                key, ns, value = parts[1], int(parts[2]), parts[3]
                if value.startswith("[") and value.endswith("]"):
                    entries = DICT_ENTRY.findall(value)
                    if entries:
                        out.extend((f"{key}/{k}", ns, v) for k, v in entries)
                        continue
                out.append((key, ns, value))
    return out


def recvs(proc):
    return recvs_of(proc.snapshot())


def recv_keys(lines):
    return {k for k, _, _ in recvs_of(lines)}


def statuses(proc):
    return [(ns, line[7:]) for ns, line in proc.snapshot() if line.startswith("STATUS ")]


def percentile(sorted_values, p):
    if not sorted_values:
        return float("nan")
    k = max(0, math.ceil(p * len(sorted_values)) - 1)
    return sorted_values[k]


def verdict(ok):
    return "PASS" if ok else "FAIL"


# ---------------------------------------------------------------------------------------- harness

class Harness:
    def __init__(self, args):
        self.args = args
        self.url = os.environ.get("SETTINGS_PG_URL")
        if not self.url:
            sys.exit("sync-fault-tests: SETTINGS_PG_URL is not set: run inside Integrations/SettingsPostgres/Scripts/test-server.sh")
        self.admin_url = os.environ.get("SETTINGS_SYNC_ADMIN_URL")
        self.admin_password = os.environ.get("SETTINGS_SYNC_ADMIN_PASSWORD", "")
        if not self.admin_url:
            sys.exit("sync-fault-tests: SETTINGS_SYNC_ADMIN_URL is not set: run inside Scripts/test-server.sh")
        self.user = os.environ.get("SETTINGS_PG_USER", "settings")
        self.host = os.environ.get("SETTINGS_PG_HOST", "127.0.0.1")
        self.port = int(os.environ.get("SETTINGS_PG_PORT", "5432"))
        self.pgdata = os.environ.get("PGDATA_DIR")
        self.pgbin = os.environ.get("PGBIN")
        self.tool = None
        self.rng = random.Random(args.seed)
        self.procs = []
        self.work = None
        self.run_id = uuid.uuid4().hex[:8]

    def find_tool(self):
        if self.tool:
            return self.tool
        if self.args.bin:
            d = self.args.bin
        elif os.path.exists(os.path.join(PACKAGE, ".build", "debug", "settings-sync-device")):
            d = os.path.join(PACKAGE, ".build", "debug")
        else:
            out = subprocess.run(["swift", "build", "--show-bin-path"], cwd=PACKAGE, capture_output=True,
                                 text=True, check=True)
            d = out.stdout.strip()
        tool = os.path.join(d, "settings-sync-device")
        if not os.access(tool, os.X_OK):
            sys.exit(f"sync-fault-tests: no settings-sync-device in {d}: "
                     f"run `swift build --product settings-sync-device` in {PACKAGE}")
        self.tool = tool
        return tool

    def app(self, test):
        return f"org.settings.fault.{test}.{self.run_id}"

    # server control
    def _pg(self, *argv, check=True):
        if not (self.pgdata and self.pgbin):
            raise TestFailure("PGDATA_DIR/PGBIN not set: cannot restart the server")
        return subprocess.run(["runuser", "-u", "postgres", "--", *argv], cwd="/", capture_output=True,
                              text=True, check=check)

    def pg_stop(self):
        self._pg(os.path.join(self.pgbin, "pg_ctl"), "-D", self.pgdata, "-m", "immediate", "-w", "stop")

    def pg_start(self):
        self._pg(os.path.join(self.pgbin, "pg_ctl"), "-D", self.pgdata, "-l",
                 os.path.join(self.pgdata, "server.log"), "-w", "-t", "30", "-o",
                 f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.pgdata} -c fsync=off", "start")

    def pg_running(self):
        r = self._pg(os.path.join(self.pgbin, "pg_ctl"), "-D", self.pgdata, "status", check=False)
        return r.returncode == 0

    def psql(self, sql, timeout=60):
        psql = os.path.join(self.pgbin, "psql") if self.pgbin else "psql"
        # as the administrator: devices may only read their own rows and push through the functions
        r = subprocess.run([psql, self.admin_url, "-X", "-q", "-At", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-f", "-"],
                           input="SET search_path = settings_sync, public;\n" + sql, capture_output=True, text=True, timeout=timeout,
                           env=dict(os.environ, PGPASSWORD=self.admin_password))
        if r.returncode != 0:
            raise TestFailure(f"psql failed: {r.stderr.strip()[:500]}")
        return [line.split("\t") for line in r.stdout.splitlines() if line]

    def spaces(self, app):
        """The sync spaces of an app for the test's user (the space is (role, app id))."""
        rows = self.psql(f"SELECT app FROM settings_sync_spaces WHERE owner = {lit(self.user)} AND app = {lit(app)};")
        return [r[0] for r in rows]

    def server_entries(self, app):
        """{key: (value or None for a tombstone, hlc, device)} of every row of the app's space(s);
        values decoded from binary plists (undecodable ones as the bytes)."""
        out = {}
        rows = self.psql("SELECT key, coalesce(encode(value, 'hex'), '-'), hlc, device FROM settings_sync_entries "
                         f"WHERE owner = {lit(self.user)} AND app = {lit(app)};")
        for key, hexv, hlc, device in rows:
            if hexv == "-":
                value = None
            else:
                raw = bytes.fromhex(hexv)
                try:
                    value = plistlib.loads(raw)
                except Exception:  # noqa: BLE001 - planted garbage stays bytes
                    value = raw
            out[key] = (value, int(hlc), device)
        return out

    def live(self, app):
        return {k: v for k, (v, _, _) in self.server_entries(app).items() if v is not None}

    # test bracket
    def run_test(self, name, fn):
        self.work = tempfile.mkdtemp(prefix=f"settings-sync-{name}-")
        self.procs = []
        ok = False
        t0 = time.monotonic()
        try:
            ok = fn(self)
        except TestFailure as e:
            print(f"{name}: error: {e}  FAIL", flush=True)
        except Exception as e:  # noqa: BLE001 - a harness bug must not hide the other tests
            import traceback
            traceback.print_exc()
            print(f"{name}: harness error {type(e).__name__}: {e}  FAIL", flush=True)
        finally:
            for p in self.procs:
                if p.alive():
                    p.kill()
                try:
                    p.stop(grace=1)
                except Exception:  # noqa: BLE001
                    pass
            if self.pgdata and self.pgbin and not self.pg_running():
                try:
                    self.pg_start()
                except subprocess.CalledProcessError as e:
                    print(f"{name}: could not restart the server: {e.stderr}", flush=True)
            if ok and not self.args.keep:
                shutil.rmtree(self.work, ignore_errors=True)
            else:
                print(f"  {name}: work directory kept: {self.work} ({time.monotonic() - t0:.0f}s)", flush=True)
        return ok


def lit(s):
    """A SQL string literal."""
    return "'" + s.replace("'", "''") + "'"


# ------------------------------------------------------------------------------------------ tests

def test_proxy(h):
    """The proxy behaves as the other tests assume, checked with psql through it."""
    proxy = Proxy(h.host, h.port)
    url = proxy.url(h.url)
    psql = os.path.join(h.pgbin, "psql") if h.pgbin else "psql"
    env = dict(os.environ, PGCONNECT_TIMEOUT="2")

    def query(sql, timeout=15):
        t0 = time.monotonic()
        r = subprocess.run([psql, url, "-X", "-At", "-c", sql], capture_output=True, text=True, env=env,
                           timeout=timeout)
        return r.returncode, (r.stdout + r.stderr).strip(), time.monotonic() - t0

    results = []
    try:
        code, out, dt = query("SELECT 40 + 2")
        results.append(("pass", code == 0 and out == "42", f"{out!r} in {dt * 1000:.0f} ms"))

        box = {}
        t = threading.Thread(target=lambda: box.update(r=query("SELECT pg_sleep(10)")))
        t.start()
        time.sleep(1.0)
        n = proxy.drop_all()
        t.join(timeout=15)
        code, out, dt = box.get("r", (None, "no result", 0))
        results.append(("drop", n >= 1 and code not in (0, None) and dt < 5, f"{n} dropped, psql exit {code} after {dt:.1f}s"))

        proxy.set_mode("refuse")
        code, out, dt = query("SELECT 1")
        refused = [line.strip() for line in out.splitlines() if "refused" in line.lower()]
        results.append(("refuse", code != 0 and bool(refused) and dt < 2,
                        f"exit {code} after {dt:.2f}s: {refused[0][-40:] if refused else out[:60]}"))

        proxy.set_mode("blackhole")
        code, out, dt = query("SELECT 1")
        results.append(("blackhole", code != 0 and dt >= 1.5, f"exit {code} after {dt:.1f}s (connect timeout 2 s)"))

        proxy.set_mode("pass")
        code, out, dt = query("SELECT 40 + 2")
        results.append(("pass again", code == 0 and out == "42", f"{out!r} in {dt * 1000:.0f} ms"))

        if h.pgdata and h.pgbin:
            h.pg_stop()
            code, out, dt = query("SELECT 1")
            results.append(("server stopped", code != 0 and dt < 2, f"exit {code} after {dt:.2f}s"))
            t0 = time.monotonic()
            h.pg_start()
            start_s = time.monotonic() - t0
            code, out, dt = query("SELECT 40 + 2")
            results.append(("server restarted", code == 0 and out == "42", f"in {start_s:.2f}s"))
    finally:
        proxy.close()
    ok = all(r[1] for r in results)
    print("proxy: " + "; ".join(f"{name} {'ok' if good else 'WRONG'} ({what})" for name, good, what in results)
          + f"  {verdict(ok)}", flush=True)
    return ok


def test_converge(h):
    a = h.args
    n_dev = 4
    writes = 100 if a.small else 1000
    shared = 20 if a.small else 100
    unique = max(1, writes // 10)
    interval = a.interval_ms if a.interval_ms is not None else (50 if a.small else 5)
    app = h.app("converge")
    proxy = Proxy(h.host, h.port)
    url = proxy.url(h.url)
    devices = [Device(h, f"d{i}", app, url) for i in range(n_dev)]
    procs = {d.name: [] for d in devices}
    errors = []

    def drive(d):
        # shared keys first, then keys no other device writes; each `write` ends synchronised (DONE)
        for prefix, count, keys in (("shared", writes, shared), (f"u{d.name}", unique, unique)):
            p = d.start("write", "--count", count, "--keys", keys, "--prefix", prefix, "--tag", d.name,
                        "--interval-ms", interval + 2 * int(d.name[1:]))   # staggered: last writes spread out
            procs[d.name].append((prefix, count, keys, p))
            try:
                code = p.wait(300)
            except TestFailure as e:
                errors.append(str(e))
                return
            if code != 0 or not done(p):
                errors.append(f"{p.label}: {p.tail()}")
                return

    t0 = time.monotonic()
    threads = [threading.Thread(target=drive, args=(d,)) for d in devices]
    for t in threads:
        t.start()
    total = n_dev * (writes + unique)
    restarted = 0
    last_drop = time.monotonic()
    dropped_conns = 0
    try:
        while any(t.is_alive() for t in threads):
            time.sleep(0.05)
            now = time.monotonic()
            if now - last_drop >= 2.0:
                dropped_conns += proxy.drop_all()
                last_drop = now
            acked = sum(len(acks(p)) for name in procs for (_, _, _, p) in procs[name])
            if not restarted and acked >= total // 2:
                proxy.events.append((time.time_ns(), "server stop"))
                h.pg_stop()
                time.sleep(1.0)
                h.pg_start()
                proxy.events.append((time.time_ns(), "server started"))
                restarted = 1
        write_s = time.monotonic() - t0
        if errors:
            raise TestFailure("; ".join(errors)[:1000])
        if not restarted:
            errors.append("the server restart did not happen")
        dumps = {}
        for d in devices:
            dumps[d.name], _, _ = d.dump()
        entries = h.server_entries(app)
        server = {k: v for k, (v, _, _) in entries.items() if v is not None}
    finally:
        proxy.close(os.path.join(h.work, "proxy.log"))

    names = [d.name for d in devices]
    ref = dumps[names[0]]
    differing = [n for n in names if dumps[n] != ref]
    server_differs = server != ref
    lost = []
    # device-unique keys: each written once, by one device
    for d in devices:
        for j in range(unique):
            key = f"u{d.name}/k{j}"
            v = parse_value(ref.get(key))
            if v is None or v[0] != d.name or v[1] != j:
                lost.append(f"{key}={ref.get(key)!r}")
    # shared keys: the winner is one device's last write of the key (no acknowledged write lost) ...
    for j in range(shared):
        key = f"shared/k{j}"
        last_i = max(i for i in range(writes) if i % shared == j)
        v = parse_value(ref.get(key))
        if v is None or v[0] not in names or v[1] != last_i:
            lost.append(f"{key}={ref.get(key)!r} (want some device's write {last_i})")
    # ... and the newest of those. The hlc is the write's wall-clock ms (one machine, one clock), so the
    # greatest (hlc, device) is the last write in real time, ties within a few ms aside. Another
    # device's last write of key j happened after its ACK of write last_i - 1 was printed: if that is
    # later than the winner's write time (+ a tolerance), the winner is not the greatest.
    ties = 0
    not_newest = []
    ack_times = {}
    for name in names:
        for (prefix, _, _, p) in procs[name]:
            if prefix == "shared":
                ack_times[name] = {int(line.split()[1]): ns for ns, line in p.snapshot()
                                   if line.startswith("ACK ") and line.split()[1].isdigit()}
    tol_ns = a.tie_ms * 1_000_000
    for j in range(shared):
        key = f"shared/k{j}"
        v = parse_value(ref.get(key))
        if v is None:
            continue
        last_i = max(i for i in range(writes) if i % shared == j)
        winner_ns = v[2]
        later = {}
        for name in names:
            if name == v[0]:
                continue
            prev_ack = ack_times.get(name, {}).get(last_i - 1)
            if prev_ack is not None and prev_ack > winner_ns + tol_ns:
                later[name] = (prev_ack - winner_ns) / 1e6   # that device wrote the key this much later
            elif prev_ack is not None and abs(prev_ack - winner_ns) <= tol_ns:
                ties += 1
        if later:
            row = entries.get(key)
            stamp = f", its hlc {(row[1] >> 16) - winner_ns // 1_000_000:+d} ms from its write time" if row else ""
            not_newest.append(f"{key}: {v[0]}'s write {last_i} holds the key{stamp}, but "
                              + ", ".join(f"{n} wrote it >= {ms:.0f} ms later" for n, ms in sorted(later.items())))
    ok = not errors and not differing and not server_differs and not lost and not not_newest
    print(f"converge: {n_dev} devices x {writes} writes ({shared} shared keys) + {unique} unique keys each, "
          f"{proxy.drops} drops ({dropped_conns} connections), {restarted} server restart, {write_s:.1f}s: "
          f"{len(lost)} lost, {len(differing)} devices differing{' and the server' if server_differs else ''}, "
          f"{len(ref)} keys, shared keys holding the newest write {shared - len(not_newest)}/{shared} "
          f"({ties} too close to order)  {verdict(ok)}", flush=True)
    for line in (errors + lost + not_newest)[:10]:
        print(f"  {line}")
    if differing or server_differs:
        for n in differing[:2]:
            diff = {k for k in set(ref) | set(dumps[n]) if ref.get(k) != dumps[n].get(k)}
            print(f"  {n} differs from {names[0]} at {len(diff)} keys, e.g. {sorted(diff)[:3]}")
        if server_differs:
            diff = {k for k in set(ref) | set(server) if ref.get(k) != server.get(k)}
            print(f"  server differs from {names[0]} at {len(diff)} keys, e.g. {sorted(diff)[:3]}")
    return ok


def test_latency(h):
    a = h.args
    n = 200 if a.small else 1000
    app = h.app("latency")
    A = Device(h, "A", app, h.url)
    B = Device(h, "B", app, h.url)
    w = B.start("watch")
    if not w.wait_line(lambda line: line.startswith("STATUS uptodate"), 30):
        raise TestFailure(f"B never up to date: {w.tail()}")
    p, code = A.run("write", "--count", n, "--keys", n, "--prefix", "lat", "--tag", "A", "--interval-ms", 5,
                    timeout=300)
    if code != 0:
        raise TestFailure(f"A's write failed: {p.tail()}")
    w.wait_until(lambda lines: len({k for k in recv_keys(lines) if k.startswith("lat/")}) >= n, 15)
    alive = w.alive()
    first = {}
    for key, ns, value in recvs(w):
        if key.startswith("lat/") and key not in first:
            v = parse_value(value)
            if v:
                first[key] = (ns - v[2]) / 1e6
    lat = sorted(first.values())
    p50, p99 = percentile(lat, 0.50), percentile(lat, 0.99)
    missing = n - len(lat)
    ok = missing == 0 and alive and p50 <= 100 and p99 <= 250
    print(f"latency: {n} writes on A (5 ms apart) seen by B's watch (origin .sync): {len(lat)}/{n} received, "
          f"p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {lat[-1] if lat else float('nan'):.1f} ms "
          f"(targets 100/250)  {verdict(ok)}", flush=True)
    return ok


def _offline_round(h, proxy, devices, tag, edits, outage):
    """Edits made while `outage` holds (refuse or server down) by `write` processes, then each device's
    `watch`; returns seconds from the end of the outage until every device received the other's edits,
    and the seconds until the first one arrived."""
    writers = []
    for d in devices:
        writers.append(d.start("write", "--count", edits, "--keys", edits, "--prefix", f"{tag}{d.name}",
                               "--tag", d.name))
    for p in writers:
        if not p.wait_line(lambda line, e=edits: line == f"ACK {e - 1}", 60):
            raise TestFailure(f"{p.label}: {edits} edits not acknowledged while offline: {p.tail()}")
    for p in writers:
        p.stop(grace=3)   # the edits are flushed (acknowledged); the outbox holds them
    watchers = [d.start("watch") for d in devices]
    time.sleep(1.0)       # let them fail to connect a few times, backing off
    return watchers


def _offline_converged(watchers, devices, tag, edits, t0_ns, timeout):
    want = {}
    for w, d in zip(watchers, devices):
        others = [o for o in devices if o is not d]
        want[w.label] = {f"{tag}{o.name}/k{j}" for o in others for j in range(edits)}
    for w in watchers:
        w.wait_until(lambda lines, w=w: want[w.label] <= recv_keys(lines), timeout)
    last, first, missing = 0, None, 0
    for w in watchers:
        got = {}
        for key, ns, _ in recvs(w):
            if key in want[w.label] and key not in got:
                got[key] = ns
        missing += len(want[w.label] - set(got))
        if got:
            last = max(last, max(got.values()))
            f = min(got.values())
            first = f if first is None else min(first, f)
    return (last - t0_ns) / 1e9, ((first or t0_ns) - t0_ns) / 1e9, missing


def test_offline(h):
    a = h.args
    edits = 100
    app = h.app("offline")
    proxy = Proxy(h.host, h.port)
    url = proxy.url(h.url)
    A = Device(h, "A", app, url)
    B = Device(h, "B", app, url)
    devices = [A, B]
    try:
        # a first sync so both devices know the server (and the space exists)
        for d in devices:
            p, code = d.run("sync", "--seconds", 1, timeout=60)
            if code != 0:
                raise TestFailure(f"{p.label}: {p.tail()}")
        # 1: the network is down (refused) while both edit
        proxy.set_mode("refuse")
        watchers = _offline_round(h, proxy, devices, "off1", edits, "refuse")
        t0 = time.time_ns()
        proxy.set_mode("pass")
        conv1, first1, missing1 = _offline_converged(watchers, devices, "off1", edits, t0, 30)
        for w in watchers:
            w.stop()
        # 2: the server is down for 10 s while both edit
        stop_s = a.server_stop_s
        t_stop = time.monotonic()
        h.pg_stop()
        watchers = _offline_round(h, proxy, devices, "off2", edits, "server")
        time.sleep(max(0.0, stop_s - (time.monotonic() - t_stop)))
        t_cmd = time.time_ns()
        h.pg_start()
        t_ready = time.time_ns()
        conv2, first2, missing2 = _offline_converged(watchers, devices, "off2", edits, t_ready, 30)
        down_s = (t_ready - t_cmd) / 1e9
        for w in watchers:
            w.stop()
        final = [d.dump()[0] for d in devices]
    finally:
        proxy.close(os.path.join(h.work, "proxy.log"))
    same = final[0] == final[1]
    ok = missing1 == 0 and missing2 == 0 and conv1 <= 2.0 and conv2 <= 3.0 and same
    print(f"offline: 2 devices x {edits} edits while refused, reconnect: converged in {conv1:.2f}s "
          f"(first edit {first1:.2f}s, {missing1} missing; target 2 s); while the server was stopped "
          f"{stop_s:.0f}s: converged {conv2:.2f}s after it was ready (+{down_s:.2f}s start-up; first "
          f"{first2:.2f}s, {missing2} missing; target 3 s); layers {'identical' if same else 'DIFFER'}  "
          f"{verdict(ok)}", flush=True)
    return ok


def count_leaves(obj, prefix):
    if isinstance(obj, dict):
        return sum(count_leaves(v, f"{prefix}/{k}" if prefix else k) for k, v in obj.items())
    return 1


def test_bulk(h):
    a = h.args
    n = 2000 if a.small else 10000
    app = h.app("bulk")
    A = Device(h, "A", app, h.url)
    p, code = A.run("load", "--count", n, "--prefix", "bulk", timeout=300)
    up = [line for _, line in p.snapshot() if line.startswith("UPLOADED ")]
    if code != 0 or not up:
        raise TestFailure(f"load failed: {p.tail()}")
    upload_s = float(up[-1].split()[1]) / 1000
    # process start-up + connect + an empty sync, measured on a fresh device of an empty app
    empty = h.app("bulk-empty")
    Device(h, "E0", empty, h.url).dump()                 # warms the binary's pages
    _, base_s, _ = Device(h, "E", empty, h.url).dump()
    F = Device(h, "F", app, h.url)
    data, total_s, _ = F.dump(timeout=60)
    got = sum(1 for k in data if k.startswith("bulk/"))
    durable = None
    try:
        with open(F.file, "rb") as f:
            durable = count_leaves(plistlib.load(f).get("bulk", {}), "")
    except Exception as e:  # noqa: BLE001
        durable = f"unreadable ({e})"
    net_s = total_s - base_s
    ok = got == n and durable == n and upload_s <= 3.0 and net_s <= 2.0
    print(f"bulk: {n} keys: upload {upload_s:.2f}s (target 3 s); fresh device dump {total_s:.2f}s, of which "
          f"{base_s:.2f}s start-up + empty sync, so download + apply + durable {net_s:.2f}s (target 2 s); "
          f"{got}/{n} in the dump, {durable}/{n} in its file  {verdict(ok)}", flush=True)
    return ok


def test_kill(h):
    a = h.args
    runs = a.kills if a.kills is not None else (20 if a.small else 200)
    keys = 20
    count = 300
    app = h.app("kill")
    K = Device(h, "K", app, h.url)
    W = Device(h, "W", app, h.url)
    watch = W.start("watch")
    if not watch.wait_line(lambda line: line.startswith("STATUS uptodate"), 30):
        raise TestFailure(f"watcher never up to date: {watch.tail()}")
    acked = {}            # key -> (run, i) of its last acknowledged write
    killed = finished = failed = 0
    total_acks = 0
    t0 = time.monotonic()
    for run in range(runs):
        p = K.start("write", "--count", count, "--keys", keys, "--prefix", "kill", "--tag", f"r{run}",
                    "--interval-ms", 2)
        time.sleep(h.rng.uniform(0.0, a.max_kill_delay))
        p.kill()
        code = p.wait(30)
        if code == -signal.SIGKILL:
            killed += 1
        elif code == 0:
            finished += 1
        else:
            failed += 1
            print(f"  run {run}: write exited {code}: {p.tail()}")
        got = acks(p)
        total_acks += len(got)
        for i in got:
            acked[f"kill/k{i % keys}"] = (run, i)
        p.stop(grace=0)
    kill_s = time.monotonic() - t0
    # the device starts once more and syncs what its killed runs left pending
    final, _, _ = K.dump(timeout=60)
    server = h.live(app)
    fresh, _, _ = Device(h, "F", app, h.url).dump(timeout=60)

    def order(v):
        pv = parse_value(v if isinstance(v, str) else None)
        return (int(pv[0][1:]), pv[1]) if pv and pv[0].startswith("r") else None

    lost = []
    for name, layer in (("server", server), ("device", final), ("fresh device", fresh)):
        for key, want in sorted(acked.items()):
            have = order(layer.get(key))
            if have is None or have < want:
                lost.append(f"{name}: {key} = {layer.get(key)!r}, acknowledged r{want[0]}:{want[1]}")
    # the watcher saw every change once and in write order (an old value applied again is a duplicate)
    watch.wait_until(lambda lines: {(k, v) for k, v in server.items() if k.startswith("kill/")}
                     <= {(k, v) for k, _, v in recvs_of(lines)}, 20)
    seen = {}
    dups = []
    for key, _, value in recvs(watch):
        o = order(value)
        if o is None:
            continue
        prev = seen.get(key)
        if prev is not None and o <= prev:
            dups.append(f"{key}: r{o[0]}:{o[1]} after r{prev[0]}:{prev[1]}")
        seen[key] = o if prev is None else max(prev, o)
    watcher_behind = [k for k in server if k.startswith("kill/") and seen.get(k) != order(server[k])]
    alive = watch.alive()
    ok = not lost and not dups and not failed and alive and not watcher_behind
    print(f"kill: {runs} runs of a writing device, {killed} SIGKILLed, {finished} finished first, {failed} failed, "
          f"{total_acks} writes acknowledged over {kill_s:.0f}s: {len(lost)} lost (server, restarted device, "
          f"fresh device), {len(dups)} applied twice or out of order on a watching device, "
          f"{len(watcher_behind)} keys it missed  {verdict(ok)}", flush=True)
    for line in (lost + dups)[:10]:
        print(f"  {line}")
    return ok


def _bplist_cycle():
    """A binary plist whose top object is an array that contains itself."""
    body = b"bplist00" + bytes([0xA1, 0x00])          # object 0: array of one ref -> object 0
    offsets = bytes([8])
    trailer = bytes(6) + bytes([1, 1]) + (1).to_bytes(8, "big") + (0).to_bytes(8, "big") + (10).to_bytes(8, "big")
    return body + offsets + trailer


def bad_rows(n, now_ms):
    """n hostile rows [(kind, marker, key, value bytes, hlc)]; every key contains its marker."""
    good_value = plistlib.dumps("fine value", fmt=plistlib.FMT_BINARY)
    nested = "x"
    for _ in range(100):
        nested = [nested]
    deep = plistlib.dumps(nested, fmt=plistlib.FMT_BINARY)
    rng = random.Random(7)
    hlc = now_ms << 16
    rows = []
    for j in range(n):
        m = f"bad{j:03}"
        kind = j % 10
        if kind == 0:
            rows.append(("40 components", m, m + "/" + "/".join(f"c{c}" for c in range(40)), good_value, hlc))
        elif kind == 1:
            rows.append(("dangling escape", m, m + "\\", good_value, hlc))
        elif kind == 2:
            rows.append(("non-canonical escape", m, m + "\\q", good_value, hlc))
        elif kind == 3:
            rows.append(("garbage bytes", m, m + "/garbage", bytes(rng.randrange(256) for _ in range(64)), hlc))
        elif kind == 4:
            rows.append(("truncated plist", m, m + "/truncated", good_value[:-7], hlc))
        elif kind == 5:
            rows.append(("empty value", m, m + "/empty", b"", hlc))
        elif kind == 6:
            rows.append(("dictionary value", m, m + "/dict", plistlib.dumps({"a": 1}, fmt=plistlib.FMT_BINARY), hlc))
        elif kind == 7:
            rows.append(("hlc 1 h ahead", m, m + "/future", good_value, (now_ms + 3_600_000) << 16))
        elif kind == 8:
            rows.append(("depth 100", m, m + "/deep", deep, hlc))
        else:
            rows.append(("self-containing array", m, m + "/cycle", _bplist_cycle(), hlc))
    return rows


def plant_sql(owner, app, rows, device):
    """One push's worth of rows, as settings_sync_push would store them (planted by the administrator),
    then its notification on the space's channel."""
    values = ",\n".join(f"({lit(k)}, decode({lit(v.hex())}, 'hex'), {hlc})" for k, v, hlc in rows)
    space = f"owner = {lit(owner)} AND app = {lit(app)}"
    return f"""
BEGIN;
INSERT INTO settings_sync_spaces AS s (owner, app, seq) VALUES ({lit(owner)}, {lit(app)}, 1)
  ON CONFLICT (owner, app) DO UPDATE SET seq = s.seq + 1;
INSERT INTO settings_sync_entries AS e (owner, app, key, value, hlc, device, seq)
  SELECT {lit(owner)}, {lit(app)}, v.k, v.v, v.h, '{device}'::uuid, (SELECT seq FROM settings_sync_spaces WHERE {space})
    FROM (VALUES {values}) AS v(k, v, h)
  ON CONFLICT (owner, app, key) DO UPDATE SET value = excluded.value, hlc = excluded.hlc, device = excluded.device,
    seq = excluded.seq;
SELECT pg_notify((SELECT channel FROM settings_sync_spaces WHERE {space}), (SELECT seq FROM settings_sync_spaces WHERE {space})::text);
COMMIT;
"""


def test_badrows(h):
    n = 100
    n_good = 20
    app = h.app("badrows")
    D = Device(h, "D", app, h.url)
    # the device pushes first, so the space (and the schema) exist as the library makes them
    p, code = D.run("write", "--count", 1, "--keys", 1, "--prefix", "seed", "--tag", "D", timeout=120)
    if code != 0:
        raise TestFailure(f"seed write failed: {p.tail()}")
    spaces = h.spaces(app)
    if len(spaces) != 1:
        raise TestFailure(f"expected one sync space for {app}, found {spaces}")
    space = spaces[0]
    watch = D.start("watch")
    if not watch.wait_line(lambda line: line.startswith("STATUS uptodate"), 30):
        raise TestFailure(f"device never up to date: {watch.tail()}")
    now_ms = time.time_ns() // 1_000_000
    bad = bad_rows(n, now_ms)
    good = [(f"good/k{j}", plistlib.dumps(f"good:{j}:{time.time_ns()}", fmt=plistlib.FMT_BINARY), now_ms << 16)
            for j in range(n_good)]
    rows = [(k, v, hlc) for _, _, k, v, hlc in bad] + good
    random.Random(3).shuffle(rows)
    planter = uuid.uuid4()
    h.psql(plant_sql(h.user, space, rows, planter))
    want1 = {k for k, _, _ in good}
    watch.wait_until(lambda lines: want1 <= recv_keys(lines), 15)
    # a second push of good rows: the bad ones must not be reported again
    good2 = [(f"good/m{j}", plistlib.dumps(f"good2:{j}:{time.time_ns()}", fmt=plistlib.FMT_BINARY),
              (time.time_ns() // 1_000_000) << 16) for j in range(5)]
    h.psql(plant_sql(h.user, space, good2, planter))
    want2 = want1 | {k for k, _, _ in good2}
    watch.wait_until(lambda lines: want2 <= recv_keys(lines), 15)
    received = {k for k, _, _ in recvs(watch)}
    alive = watch.alive()
    watch.stop()
    watch_text = "\n".join(l for _, l in watch.snapshot() if not l.startswith("RECV ")) + "\n" + watch.stderr()
    again, _, again_p = D.dump()
    again_text = "\n".join(l for _, l in again_p.snapshot() if not l.startswith("{")) + "\n" + again_p.stderr()
    fresh, _, fresh_p = Device(h, "F", app, h.url).dump()
    fresh_text = "\n".join(l for _, l in fresh_p.snapshot() if not l.startswith("{")) + "\n" + fresh_p.stderr()

    def reports(text):
        counts = {}
        for _, m, _, _, _ in bad:
            c = text.count(m)
            if c:
                counts[m] = c
        return counts

    r_watch, r_again, r_fresh = reports(watch_text), reports(again_text), reports(fresh_text)
    good_missing = sorted(want2 - received)
    dump_missing = [k for k in want2 if k not in again] + [k for k in want2 if k not in fresh]
    leaked = sorted({k for layer in (again, fresh) for k in layer if "bad" in k} |
                    {k for k in received if "bad" in k})
    leaked_kinds = sorted({kind for kind, m, _, _, _ in bad if any(m in k for k in leaked)})
    printed = bool(r_watch or r_fresh)
    report_ok = (not printed) or (len(r_watch) == n and all(c == 1 for c in r_watch.values()) and not r_again)
    ok = alive and not good_missing and not dump_missing and not leaked and report_ok
    if printed:
        report = (f"reported: {len(r_watch)}/{n} by the watching device (max {max(r_watch.values(), default=0)} "
                  f"times each), {len(r_again)} again after its restart, {len(r_fresh)}/{n} by a fresh device "
                  f"(max {max(r_fresh.values(), default=0)} times each)")
    else:
        report = "reports: the device printed none (once-only not checked)"
    print(f"badrows: {n} hostile rows + {n_good + len(good2)} good ones planted: device "
          f"{'alive' if alive else 'DIED'}, good rows applied {len(want2) - len(good_missing)}/{len(want2)} "
          f"(live), {len(want2) * 2 - len(dump_missing)}/{len(want2) * 2} (restarted and fresh dump), "
          f"{len(leaked)} bad keys applied{' (' + ', '.join(leaked_kinds) + ')' if leaked_kinds else ''}; "
          f"{report}  {verdict(ok)}", flush=True)
    if not alive:
        print(f"  {watch.tail()}")
    for k in leaked[:5]:
        print(f"  applied: {k!r}")
    return ok


def test_toolarge(h):
    """A 300 KiB value in the settings file (put there while no device process ran, as another tool
    would): reported as too large to sync, kept locally, and the other keys still sync."""
    app = h.app("toolarge")
    D = Device(h, "D", app, h.url)
    p, code = D.run("write", "--count", 1, "--keys", 1, "--prefix", "before", "--tag", "D", timeout=120)
    if code != 0:
        raise TestFailure(f"first write failed: {p.tail()}")
    with open(D.file, "rb") as f:
        fmt = plistlib.FMT_BINARY if f.read(6) == b"bplist" else plistlib.FMT_XML
    with open(D.file, "rb") as f:
        data = plistlib.load(f)
    data["big"] = {"value": "x" * (300 * 1024)}
    with open(D.file, "wb") as f:
        plistlib.dump(data, f, fmt=fmt)
    p, code = D.run("write", "--count", 5, "--keys", 5, "--prefix", "after", "--tag", "D", timeout=120)
    text = "\n".join(l for _, l in p.snapshot()) + "\n" + p.stderr()
    reported = [l for l in text.splitlines() if "big/value" in l and "too large" in l]
    fresh, _, _ = Device(h, "F", app, h.url).dump()
    mine, _, _ = D.dump()
    synced = all(f"after/k{j}" in fresh for j in range(5)) and "before/k0" in fresh
    ok = code == 0 and done(p) and len(reported) >= 1 and synced and "big/value" not in fresh and \
        len(mine.get("big/value", "")) == 300 * 1024
    print(f"toolarge: a 300 KiB value: {'reported' if reported else 'NOT reported'} "
          f"({reported[0].strip()[:110] if reported else ''}){', ' + str(len(reported)) + ' times' if len(reported) > 1 else ''}; "
          f"the other keys {'synced' if synced else 'NOT synced'}, the value "
          f"{'kept locally' if 'big/value' in mine else 'LOST locally'} and "
          f"{'not on a fresh device' if 'big/value' not in fresh else 'ON A FRESH DEVICE'}  {verdict(ok)}", flush=True)
    return ok


def test_redial(h):
    """A device writing steadily through the proxy; its connection is dropped at random moments (often
    with a push or pull in flight; every other drop soon after it reconnected). Each time it must be back, exchanging with the server, within
    5 s (backoff is capped at 2 s), and no acknowledged write may be lost."""
    a = h.args
    drops = 10 if a.small else 50
    app = h.app("redial")
    proxy = Proxy(h.host, h.port)
    D = Device(h, "D", app, proxy.url(h.url))
    gaps = []
    hung = []
    try:
        p = D.start("write", "--count", 1_000_000, "--keys", 50, "--prefix", "rd", "--tag", "D", "--interval-ms", 10)
        if not p.wait_line(lambda line: line == "ACK 20", 30):
            raise TestFailure(f"the device did not start writing: {p.tail()}")
        for k in range(drops):
            # every other drop lands soon after the reconnection: while connecting, listening, catching up
            time.sleep(h.rng.uniform(0.0, 0.3) if k % 2 else h.rng.uniform(0.1, 1.0))
            t = time.time_ns()
            if proxy.drop_all() == 0:
                continue
            deadline = time.monotonic() + 40
            back = None
            while time.monotonic() < deadline and back is None:
                back = next((c.opened_ns for c in list(proxy.history) if c.opened_ns > t and c.sent[1] > 0), None)
                time.sleep(0.01)
            if back is None:
                hung.append(f"drop {k}: no new connection within 40 s")
                break
            gaps.append((back - t) / 1e9)
            if gaps[-1] > 5.0:
                hung.append(f"drop {k}: back after {gaps[-1]:.1f}s")
        p.stop(grace=5)
        got = acks(p)
        final, _, _ = D.dump(timeout=60)
        server = h.live(app)
    finally:
        proxy.close(os.path.join(h.work, "proxy.log"))
    last = {}
    for i in got:
        last[f"rd/k{i % 50}"] = i
    lost = [k for k, i in last.items()
            if not (parse_value(server.get(k)) and parse_value(server.get(k))[1] >= i
                    and parse_value(final.get(k)) and parse_value(final.get(k))[1] >= i)]
    gaps.sort()
    ok = not hung and not lost and len(gaps) > 0
    print(f"redial: {len(gaps)} drops at random moments of a device writing every 10 ms: back after "
          f"median {percentile(gaps, 0.5):.2f}s, max {gaps[-1] if gaps else float('nan'):.2f}s (limit 5 s), "
          f"{len(hung)} hung; {len(got)} writes acknowledged, {len(lost)} keys lost  {verdict(ok)}", flush=True)
    for line in (hung + lost)[:5]:
        print(f"  {line}")
    return ok


def test_takeover(h):
    a = h.args
    rounds = 2 if a.small else 5
    app = h.app("takeover")
    D = Device(h, "D", app, h.url)
    active = D.start("sync", "--seconds", 600)
    if not active.wait_line(lambda line: line.startswith("STATUS uptodate"), 30):
        raise TestFailure(f"first process never up to date: {active.tail()}")
    times = []
    for r in range(rounds):
        standby = D.start("sync", "--seconds", 600)
        hit = standby.wait_line(lambda line: line.startswith(("STATUS standby", "STATUS uptodate")), 30)
        if not hit or not hit[2].startswith("STATUS standby"):
            raise TestFailure(f"round {r}: second process did not stand by: {hit and hit[2]!r} {standby.tail()}")
        start = len(standby.snapshot())
        time.sleep(h.rng.uniform(0.2, 1.0))
        t0 = time.time_ns()
        active.kill()
        active.wait(10)
        hit = standby.wait_line(lambda line: line.startswith("STATUS uptodate"), 15, start=start)
        if not hit:
            raise TestFailure(f"round {r}: the standby never took over: {standby.tail()}")
        times.append((hit[1] - t0) / 1e9)
        active = standby
    ok = max(times) <= 2.0
    print(f"takeover: {rounds} SIGKILLs of the syncing process: the standby was up to date after "
          f"{', '.join(f'{t:.2f}' for t in times)} s (max {max(times):.2f}s, target 2 s)  {verdict(ok)}", flush=True)
    return ok


def test_blackhole(h):
    a = h.args
    hold = a.blackhole_s
    app = h.app("blackhole")
    proxy = Proxy(h.host, h.port)
    D = Device(h, "D", app, proxy.url(h.url))
    W = Device(h, "W", app, h.url)
    try:
        watch = D.start("watch")
        if not watch.wait_line(lambda line: line.startswith("STATUS uptodate"), 30):
            raise TestFailure(f"device never up to date: {watch.tail()}")
        proxy.set_mode("blackhole")
        t_hole = time.time_ns()
        time.sleep(hold)
        noticed = [s for ns, s in statuses(watch) if ns > t_hole and not s.startswith("uptodate")]
        start = len(watch.snapshot())
        t_pass = time.time_ns()
        proxy.set_mode("pass")
        p, code = W.run("write", "--count", 1, "--keys", 1, "--prefix", "bh", "--tag", "W", timeout=60)
        if code != 0:
            raise TestFailure(f"writer failed: {p.tail()}")
        watch.wait_until(lambda lines: "bh/k0" in recv_keys(lines[start:]), 45)
        hit = next(((None, ns, k) for k, ns, _ in recvs_of(watch.snapshot()[start:]) if k == "bh/k0"), None)
        st = watch.wait_line(lambda line: line.startswith("STATUS uptodate"), 1, start=start)
    finally:
        proxy.close(os.path.join(h.work, "proxy.log"))
    if not hit:
        print(f"blackhole: {hold:.0f}s black hole, then pass: the device never received a write made after it "
              f"(45 s){'; it noticed: ' + noticed[0] if noticed else ''}  FAIL", flush=True)
        return False
    recv_s = (hit[1] - t_pass) / 1e9
    up_s = (st[1] - t_pass) / 1e9 if st else float("nan")
    ok = recv_s <= 20.0 and watch.alive()
    print(f"blackhole: {hold:.0f}s black hole ({'noticed: ' + noticed[0] if noticed else 'not noticed'}), then pass: "
          f"up to date after {up_s:.1f}s, a write made after it received after {recv_s:.1f}s "
          f"(target 20 s)  {verdict(ok)}", flush=True)
    return ok


TESTS = [("proxy", test_proxy), ("converge", test_converge), ("latency", test_latency), ("offline", test_offline),
         ("bulk", test_bulk), ("kill", test_kill), ("badrows", test_badrows), ("toolarge", test_toolarge),
         ("redial", test_redial), ("takeover", test_takeover),
         ("blackhole", test_blackhole)]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("test", nargs="+", choices=[n for n, _ in TESTS] + ["all"])
    parser.add_argument("--small", action="store_true", help="CI counts")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bin", help="directory with settings-sync-device")
    parser.add_argument("--keep", action="store_true", help="keep work directories of passing tests too")
    parser.add_argument("--kills", type=int, help="kill runs (default 200, small 20)")
    parser.add_argument("--max-kill-delay", type=float, default=1.2, help="longest wait before a SIGKILL, seconds")
    parser.add_argument("--interval-ms", type=int,
                        help="pause between a converge device's writes (default 5, small 50; +2 per device)")
    parser.add_argument("--tie-ms", type=int, default=50,
                        help="writes of one key closer than this are not ordered by the converge check")
    parser.add_argument("--server-stop-s", type=float, default=10.0)
    parser.add_argument("--blackhole-s", type=float, default=10.0)
    args = parser.parse_args()
    names = [n for n, _ in TESTS] if "all" in args.test else args.test
    h = Harness(args)
    if any(n != "proxy" for n in names):
        h.find_tool()
    results = []
    for name, fn in TESTS:
        if name in names:
            results.append((name, h.run_test(name, fn)))
    failed = [n for n, ok in results if not ok]
    print(f"sync-fault-tests: {len(results) - len(failed)}/{len(results)} passed"
          + (f"; failed: {', '.join(failed)}" if failed else ""), flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
