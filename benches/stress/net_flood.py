#!/usr/bin/env python3
"""A flood of `dump-heap` commands over net= (issue #16 item 3): `hprof listen` sends N `dump-heap` back to
back, then `exit-vm`, to java/programs/StressWorkload (four threads throwing, allocating and contending) run
with net=…,heap=dump,cpu=samples. Reports whether the JVM ended within the limit, whether the connection held
(no "stopped reading", "gone" or "unsent" from the agent), how many HEAP DUMP ENDs the front end received
(N answers + the exit dump), and how many dumps the agent found not whole (and dumped again).

    benches/stress/net_flood.py                      # JDK 17, 301 commands
    benches/stress/net_flood.py --jdk 25 --dumps 101

Needs `cargo build --release --workspace` and JDK 17's javac. Not part of CI.
"""

import argparse
import re
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import stress  # noqa: E402  (same directory: JDKs, paths, the compiled workload)

HEAP_DUMP_END = 0x2C


def count_records(data):
    """Records by tag in a binary profile; (counts, cut) where cut says the last record is incomplete."""
    header_end = data.index(b"\0") + 1 + 4 + 8
    counts, at = {}, header_end
    while at + 9 <= len(data):
        tag = data[at]
        (length,) = struct.unpack(">I", data[at + 5:at + 9])
        if at + 9 + length > len(data):
            return counts, True
        counts[tag] = counts.get(tag, 0) + 1
        at += 9 + length
    return counts, at != len(data)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--jdk", default="17", choices=sorted(stress.JDKS))
    p.add_argument("--dumps", type=int, default=301)
    p.add_argument("--limit", type=int, default=900, help="seconds before the run counts as hung")
    a = p.parse_args()
    stress.compile_program()
    work = Path(tempfile.mkdtemp(prefix="net-flood-"))
    listen = subprocess.Popen(
        [str(stress.HPROF), "listen", "127.0.0.1:0", "-o", "run.hprof", "--no-stdin"]
        + sum((["--command", "dump-heap"] for _ in range(a.dumps)), [])
        + ["--command", "exit-vm"],
        cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(work / "listen.stderr", "wb"))
    port = None
    for _ in range(400):
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", (work / "listen.stderr").read_text(errors="replace"))
        if m:
            port = m.group(1)
            break
        time.sleep(0.05)
    if port is None:
        listen.kill()
        sys.exit("hprof listen did not start")
    cmd = [f"{stress.JDKS[a.jdk]}/bin/java", f"-agentpath:{stress.AGENT}=net=127.0.0.1:{port},heap=dump,cpu=samples",
           "-cp", str(stress.CLASSES), "StressWorkload", "3600", "return"]
    started = time.monotonic()
    with open(work / "stderr", "wb") as err:
        jvm = subprocess.Popen(cmd, cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        try:
            code = jvm.wait(timeout=a.limit)
        except subprocess.TimeoutExpired:
            jvm.kill()
            jvm.wait()
            code = None
    seconds = time.monotonic() - started
    try:
        listen.wait(timeout=60)
    except subprocess.TimeoutExpired:
        listen.kill()
    stderr = (work / "stderr").read_text(errors="replace")
    data = (work / "run.hprof").read_bytes() if (work / "run.hprof").exists() else b""
    counts, cut = count_records(data) if data else ({}, True)
    not_whole = len(re.findall(r"could not be placed in their objects' layouts", stderr))
    again = len(re.findall(r"dumping again", stderr))
    given_up = len(re.findall(r"heap dump is not whole", stderr))
    connection = [w for w in ("stopped reading", "is gone", "unsent", "net:") if w in stderr]
    print(f"JDK {a.jdk}, {a.dumps} dump-heap commands + exit-vm: "
          f"{'HANG (killed after %d s)' % a.limit if code is None else 'exit %d' % code} in {seconds:.0f} s; "
          f"{len(data)} bytes received{' (last record cut)' if cut else ''}; "
          f"HEAP DUMP END: {counts.get(HEAP_DUMP_END, 0)} (expected {a.dumps + 1}); "
          f"not whole: {not_whole} found ({again} dumped again, {given_up} left not whole); "
          f"connection: {'held' if not connection else 'PROBLEM: ' + ', '.join(connection)}; files in {work}")
    ok = code == 0 and not cut and counts.get(HEAP_DUMP_END, 0) == a.dumps + 1 and not connection and not given_up
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
