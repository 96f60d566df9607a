#!/usr/bin/env python3
"""A benchmark, not a test (issue 30, item 12): N devices of one sync user all writing, and how long
a write on one device takes to reach the others.

Each device is a `settings-sync-device write --watch 1` process with its own settings file, in one
space (a new user, with the default connection limit up to 20 devices; one app id). Each writes `--writes` values to its own keys,
`--interval-ms` apart (value "tag:i:<unix ns when written>"), and prints a RECV line with the time
it saw each other device's write arrive (`store.changes`, origin .sync). A→B latency is the
receive time minus the write time, over every (writer, receiver) pair; also reported: how many
writes every other device received, and the CPU time the devices used (theirs, from the kernel)
beside the wall time.

Run it under the throwaway server, with a release build of the device:
    swift build -c release --product settings-sync-device
    bash Scripts/test-server.sh python3 Scripts/many-devices-latency.py --bin .build/release/settings-sync-device \
        --admin "$(swift build --show-bin-path)/settings-sync-admin"
"""
import argparse
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
import uuid


def percentile(values, p):
    if not values:
        return float("nan")
    k = min(len(values) - 1, max(0, int(round(p * (len(values) - 1)))))
    return values[k]


def server_cpu():
    """CPU seconds of this test server (test-server.sh's $PGDATA_DIR): its postmaster, with its
    ended children's, and its running children. 0 when the data directory is unknown."""
    data = os.environ.get("PGDATA_DIR")
    if not data:
        return 0.0
    with open(os.path.join(data, "postmaster.pid")) as f:
        master = f.readline().strip()
    total, tick = 0, os.sysconf("SC_CLK_TCK")
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()   # fields[1] is the parent; [11:15] the times
        if pid == master or fields[1] == master:
            total += sum(int(x) for x in fields[11:15])
    return total / tick


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="settings-sync-device (a release build)")
    ap.add_argument("--admin", help="settings-sync-admin (default $SETTINGS_SYNC_ADMIN_BIN)")
    ap.add_argument("--devices", type=int, default=20)
    ap.add_argument("--writes", type=int, default=100, help="writes per device")
    ap.add_argument("--keys", type=int, default=10, help="keys per device (written in turn)")
    ap.add_argument("--interval-ms", type=int, default=200, help="pause between one device's writes")
    ap.add_argument("--settle", type=float, default=5, help="seconds each device keeps syncing after its own writes")
    a = ap.parse_args()
    base = os.environ.get("SETTINGS_PG_URL")
    admin = a.admin or os.environ.get("SETTINGS_SYNC_ADMIN_BIN")
    if not base or not admin:
        sys.exit("SETTINGS_PG_URL or the admin tool is not set: run under Scripts/test-server.sh, with --admin")
    # A user of its own, with the default connection limit (24: 20 devices and a few reconnecting);
    # more devices than that get one connection each and four to spare.
    user, password = f"bench_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    limit = [] if a.devices <= 20 else ["--connection-limit", str(a.devices + 4)]
    subprocess.run([admin, "add-user", user] + limit,
                   input=password + "\n", text=True, check=True, stdout=subprocess.DEVNULL)
    rest = base.split("@", 1)[1]
    url = f"postgres://{user}:{password}@{rest}"
    app = f"bench.many.{uuid.uuid4().hex[:8]}"
    work = tempfile.mkdtemp(prefix="settings-many-")
    procs, lines = [], []
    for i in range(a.devices):
        argv = [a.bin, "write", "--file", os.path.join(work, f"d{i}", "settings.plist"), "--app", app, "--url", url,
                "--count", str(a.writes), "--keys", str(a.keys), "--prefix", f"d{i}", "--tag", f"d{i}",
                "--interval-ms", str(a.interval_ms), "--watch", "1", "--linger-ms", str(int(a.settle * 1000))]
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        out = []
        t = threading.Thread(target=lambda p=p, out=out: out.extend(p.stdout), daemon=True)
        t.start()
        procs.append((p, t))
        lines.append(out)
    server_before = server_cpu()
    start = time.monotonic()
    for p, _ in procs:   # each exits after its writes are synchronized
        p.wait(timeout=a.writes * a.interval_ms / 1000 + 300)
    wall = time.monotonic() - start
    server = server_cpu() - server_before
    for _, t in procs:
        t.join(timeout=30)
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)

    lat, received = [], {}
    for j, out in enumerate(lines):
        for line in out:
            parts = line.split(" ", 3)
            if len(parts) < 4 or parts[0] != "RECV":
                continue
            value = parts[3].strip().split(":")
            if len(value) != 3 or value[0] == f"d{j}":
                continue
            key = (value[0], value[1], j)
            if key in received:
                continue
            received[key] = True
            lat.append((int(parts[2]) - int(value[2])) / 1e6)
    lat.sort()
    # A later write to the same key may overwrite an earlier one before it arrives: count the
    # receivers that saw each writer's last value.
    last = str(a.writes - 1)
    complete = sum(1 for (w, i, j) in received if i == last)
    expected = a.devices * (a.devices - 1)
    print(f"{a.devices} devices of one user, {a.writes} writes each ({a.interval_ms} ms apart, {a.keys} keys each): "
          f"{len(lat)} arrivals measured, last writes seen {complete}/{expected}")
    print(f"A->B latency: p50 {percentile(lat, 0.5):.1f} ms, p90 {percentile(lat, 0.9):.1f} ms, "
          f"p99 {percentile(lat, 0.99):.1f} ms, max {lat[-1] if lat else float('nan'):.1f} ms")
    print(f"wall {wall:.1f} s; devices' CPU {cpu.ru_utime + cpu.ru_stime:.1f} s "
          f"({(cpu.ru_utime + cpu.ru_stime) / a.devices:.2f} s per device); server's CPU {server:.1f} s")
    failed = [i for i, (p, _) in enumerate(procs) if p.returncode != 0]
    if failed:
        print(f"devices that did not finish cleanly: {failed}")
    subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
