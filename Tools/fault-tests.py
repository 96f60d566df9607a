#!/usr/bin/env python3
"""Fault tests of Settings' persistence, beside Foundation's UserDefaults.

  Tools/fault-tests.py crash [--runs 1000]             SIGKILL a writer at random moments
  Tools/fault-tests.py multi [--processes 4 --writes 1000]
                                                       concurrent writers of distinct keys, Settings and UserDefaults
  Tools/fault-tests.py all [--runs N --processes P --writes W]
  Tools/fault-tests.py cpu [--processes 4 --writes 250 --rounds 3 --limits 20,0]
                                                       the CPU (user + system) of concurrent writers of one
                                                       file, with each history limit in turn (a measurement:
                                                       reported, never judged; not part of `all`)

BIN is the directory holding settings-fault (default: `swift build --show-bin-path`).
Exit status 0 when Settings kept every promise; the UserDefaults numbers are reported, not judged.
"""
import argparse
import os
import plistlib
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def bin_dir(args):
    if args.bin:
        return args.bin
    out = subprocess.run(["swift", "build", "--show-bin-path"], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def read_plist(path):
    with open(path, "rb") as f:
        return plistlib.load(f)


def crash(args):
    """A writer killed with SIGKILL at random moments: the file always parses, and holds at least
    every value whose flush() had returned (the writer prints each such counter value)."""
    tool = os.path.join(bin_dir(args), "settings-fault")
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="settings-crash-")
    path = os.path.join(work, "settings.plist")
    failures = 0
    kills = 0
    flushed_total = 0
    try:
        for run in range(args.runs):
            proc = subprocess.Popen([tool, "crash-writer", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            time.sleep(rng.uniform(0.0, args.max_delay))
            proc.send_signal(signal.SIGKILL)
            out, err = proc.communicate()
            if proc.returncode == -signal.SIGKILL:
                kills += 1
            elif proc.returncode != 0:
                print(f"run {run}: writer failed ({proc.returncode}): {err.decode(errors='replace').strip()}")
                failures += 1
                continue
            words = out.decode().split()
            start = int(words[1]) if len(words) >= 2 and words[0] == "start" else None
            lines = [int(x) for x in words[2:]] if start is not None else []
            flushed = max(lines) if lines else None
            if flushed is not None:
                flushed_total += len(lines)
            if not os.path.exists(path):
                if flushed is not None:
                    print(f"run {run}: file missing after flush of {flushed}")
                    failures += 1
                continue
            try:
                data = read_plist(path)
            except Exception as e:  # noqa: BLE001 - any parse failure is the finding
                print(f"run {run}: file does not parse: {e}")
                shutil.copy(path, os.path.join(work, f"broken-{run}.plist"))
                failures += 1
                continue
            if flushed is None:
                continue
            counter = data.get("counter", 0)
            if counter < flushed:
                print(f"run {run}: counter {counter} < flushed {flushed}")
                failures += 1
                continue
            # Every key this run set before its last acknowledged flush holds at least that value
            # (values set by earlier, killed runs after their last flush were never promised).
            for j in range(max(start + 1, flushed - 199), flushed + 1):
                if data.get(f"k{j % 200}", -1) < j:
                    print(f"run {run}: k{j % 200} = {data.get(f'k{j % 200}')} < flushed {j} "
                          f"(acknowledged {lines[:3]}...{lines[-3:]})")
                    failures += 1
                    break
        leftovers = [n for n in os.listdir(work) if ".tmp-" in n]
        print(f"crash: {args.runs} runs, {kills} killed mid-run, {flushed_total} flushes acknowledged, "
              f"{failures} failures, {len(leftovers)} temporary files left by killed writers")
        return failures == 0
    finally:
        if failures == 0:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}")


def multi(args):
    """P processes x W writes of distinct keys to one file: how many keys survive."""
    tool = os.path.join(bin_dir(args), "settings-fault")
    expected = args.processes * args.writes
    ok = True
    for system in ("Settings", "UserDefaults"):
        work = tempfile.mkdtemp(prefix="settings-multi-")
        env = dict(os.environ, XDG_CONFIG_HOME=work, HOME=work)
        if system == "Settings":
            path = os.path.join(work, "settings.plist")
            cmd = lambda p: [tool, "writer", path, f"p{p}", str(args.writes)]  # noqa: E731
        else:
            path = os.path.join(work, "faultsuite.plist")
            cmd = lambda p: [tool, "defaults-writer", "faultsuite", f"p{p}", str(args.writes)]  # noqa: E731
        start = time.monotonic()
        procs = [subprocess.Popen(cmd(p), env=env, stderr=subprocess.PIPE) for p in range(args.processes)]
        errors = [p.communicate()[1].decode(errors="replace").strip() for p in procs]
        elapsed = time.monotonic() - start
        codes = [p.returncode for p in procs]
        try:
            data = read_plist(path)
            present = sum(1 for p in range(args.processes) for i in range(args.writes) if f"p{p}-{i}" in data)
            note = ""
        except Exception as e:  # noqa: BLE001
            present, note = 0, f" (file unreadable: {e})"
        lost = expected - present
        print(f"multi {system}: {args.processes} processes x {args.writes} writes: {present}/{expected} keys present, "
              f"{lost} lost, {elapsed:.1f}s, exit codes {codes}{note}")
        for e in errors:
            if e:
                print(f"  stderr: {e[:200]}")
        if system == "Settings" and (lost != 0 or any(codes)):
            ok = False
        shutil.rmtree(work, ignore_errors=True)
    return ok


def cpu(args):
    """P processes x W flushed writes of distinct keys to one file, with each history limit in
    turn, round after round (so a slower minute of the machine falls on every limit alike): the
    user and system CPU the writers used, from getrusage(RUSAGE_CHILDREN)."""
    import resource
    tool = os.path.join(bin_dir(args), "settings-fault")
    limits = [int(x) for x in args.limits.split(",")]
    totals = {limit: [] for limit in limits}
    for round_ in range(args.rounds):
        for limit in limits:
            work = tempfile.mkdtemp(prefix="settings-cpu-")
            env = dict(os.environ, XDG_CONFIG_HOME=work, HOME=work)
            path = os.path.join(work, "settings.plist")
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.monotonic()
            procs = [subprocess.Popen([tool, "writer", path, f"p{p}", str(args.writes), str(limit)], env=env)
                     for p in range(args.processes)]
            codes = [p.wait() for p in procs]
            elapsed = time.monotonic() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
            totals[limit].append(user + system)
            print(f"cpu round {round_ + 1}, history limit {limit}: {args.processes} processes x {args.writes} writes: "
                  f"user {user:.2f} s, system {system:.2f} s, total {user + system:.2f} s, wall {elapsed:.2f} s, exit codes {codes}")
            shutil.rmtree(work, ignore_errors=True)
    for limit in limits:
        runs = sorted(totals[limit])
        print(f"cpu history limit {limit}: total {runs[0]:.2f}-{runs[-1]:.2f} s over {len(runs)} rounds")
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("test", choices=["crash", "multi", "all", "cpu"])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--max-delay", type=float, default=0.08, help="longest wait before SIGKILL, seconds")
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--writes", type=int, help="writes per process (multi: 1000, cpu: 250)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3, help="cpu: rounds of every history limit")
    parser.add_argument("--limits", default="20,0", help="cpu: the history limits compared, comma-separated")
    parser.add_argument("--bin", help="directory with settings-fault")
    args = parser.parse_args()
    if args.writes is None:
        args.writes = 250 if args.test == "cpu" else 1000
    ok = True
    if args.test in ("crash", "all"):
        ok &= crash(args)
    if args.test in ("multi", "all"):
        ok &= multi(args)
    if args.test == "cpu":
        ok &= cpu(args)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
