#!/usr/bin/env python3
"""Overhead and accuracy of monitor=y against no agent and JFR's jdk.JavaMonitorEnter events.

Called by run.sh, which builds the agent and checks the tools. Each configuration runs REPS times per
workload; the table shows medians. "work" is the contended phase as the program times it ("x none": its ratio
to the run without a profiler), "wall" and "cpu" the whole JVM process, "wait seen" the blocked time a
profiler reported divided by the time the program measured itself getting the lock, "entries" the
contended entries it reported.
"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

JAVA_HOME, AGENT, CLASSES, REPS = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
JAVA = os.path.join(JAVA_HOME, "bin", "java")
JFR = os.path.join(JAVA_HOME, "bin", "jfr")

WORKLOADS = {
    # 8 threads, 400 000 short sections each: the JVM mostly spins; its lock convoys make this one noisy.
    "short": ["short", "8", "400000", "500"],
    # 4 threads x 5 000 entries x 100 us held: thousands of contended entries per second, steadily.
    "frequent": ["hold", "4", "5000", "100"],
    # 4 threads x 100 entries x 5 ms held: few, long waits; about 5 s of waiting in total.
    "long": ["hold", "4", "100", "5000"],
}

ALL_MONITOR_ENTERS = """<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0" label="every monitor enter">
  <event name="jdk.JavaMonitorEnter">
    <setting name="enabled">true</setting>
    <setting name="stackTrace">true</setting>
    <setting name="threshold">0 ms</setting>
  </event>
</configuration>
"""


def configs(work):
    jfc = os.path.join(work, "monitor-all.jfc")
    with open(jfc, "w") as f:
        f.write(ALL_MONITOR_ENTERS)
    return [
        ("no agent", lambda d: []),
        ("hprof monitor=y", lambda d: [f"-agentpath:{AGENT}=monitor=y,file={d}/java.hprof.txt"]),
        (
            "hprof monitor=y + lock graph",
            lambda d: [f"-agentpath:{AGENT}=monitor=y,file={d}/java.hprof.txt,flamegraph={d}/locks.html"],
        ),
        ("JFR default (20 ms threshold)", lambda d: [f"-XX:StartFlightRecording:filename={d}/r.jfr,settings=default"]),
        ("JFR every monitor enter", lambda d: [f"-XX:StartFlightRecording:filename={d}/r.jfr,settings={jfc}"]),
    ]


def printed(stdout, name):
    m = re.search(rf"^{name}=(\d+)$", stdout, re.M)
    if not m:
        raise SystemExit(f"the benchmark program did not print {name}=:\n{stdout}")
    return int(m.group(1))


def iso_seconds(d):
    """JFR's ISO-8601 durations: PT0.0768S, PT1M2.5S."""
    m = re.fullmatch(r"PT(?:(\d+)H)?(?:(\d+)M)?(?:([\d.]+)S)?", d)
    h, mi, s = (float(g) if g else 0.0 for g in m.groups())
    return h * 3600 + mi * 60 + s


def reported(d):
    """(blocked ms, entries) the profiler wrote into directory d, or (None, None)."""
    hprof = os.path.join(d, "java.hprof.txt")
    if os.path.exists(hprof):
        text = open(hprof).read()
        start = text.rfind("MONITOR TIME BEGIN (total = ")
        section = text[start : text.index("MONITOR TIME END", start)]
        total = int(section.split("total = ")[1].split(" ")[0])
        counts = [int(l.split()[3]) for l in section.splitlines()[1:] if not l.startswith("rank")]
        return total, sum(counts)
    jfr = os.path.join(d, "r.jfr")
    if os.path.exists(jfr):
        out = subprocess.run(
            [JFR, "print", "--json", "--events", "jdk.JavaMonitorEnter", jfr], capture_output=True, text=True, check=True
        ).stdout
        events = json.loads(out)["recording"]["events"]
        return sum(iso_seconds(e["values"]["duration"]) for e in events) * 1000, len(events)
    return None, None


def run(cmd, cwd):
    """(wall seconds, CPU seconds of the JVM, stdout)."""
    out_path = os.path.join(cwd, "stdout.txt")
    with open(out_path, "w") as out, open(os.path.join(cwd, "stderr.txt"), "w") as err:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=cwd)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{open(os.path.join(cwd, 'stderr.txt')).read()}")
    return wall, usage.ru_utime + usage.ru_stime, open(out_path).read()


def main():
    work = tempfile.mkdtemp(prefix="hprof-monitor-bench-")
    rows = []
    for wname, args in WORKLOADS.items():
        for cname, vm_args in configs(work):
            works, walls, cpus, seen, entries = [], [], [], [], []
            for rep in range(REPS):
                d = tempfile.mkdtemp(dir=work)
                cmd = [JAVA, *vm_args(d), "-cp", CLASSES, "MonitorBench", *args]
                wall, cpu, stdout = run(cmd, d)
                walls.append(wall)
                cpus.append(cpu)
                works.append(printed(stdout, "work_ms"))
                ms, n = reported(d)
                if ms is not None:
                    seen.append(ms / max(printed(stdout, "waited_ms"), 1))
                    entries.append(n)
            med = statistics.median
            rows.append((wname, cname, med(works), med(walls), med(cpus), seen, entries))
            print(f"  done: {wname:5} {cname}", file=sys.stderr, flush=True)

    shutil.rmtree(work, ignore_errors=True)
    base = {w: work_ms for (w, c, work_ms, *_rest) in rows if c == "no agent"}
    print(f"JDK: {JAVA_HOME}; {REPS} runs each, medians.")
    print(f"{'workload':8} {'configuration':30} {'work ms':>8} {'x none':>6} {'wall s':>6} {'cpu s':>6} "
          f"{'wait seen':>9} {'entries':>8}")
    for wname, cname, work_ms, wall, cpu, seen, entries in rows:
        ratio = work_ms / max(base[wname], 1)
        seen_s = f"{statistics.median(seen) * 100:8.1f}%" if seen else f"{'-':>9}"
        entries_s = f"{int(statistics.median(entries)):8d}" if entries else f"{'-':>8}"
        print(f"{wname:8} {cname:30} {work_ms:8.0f} {ratio:6.2f} {wall:6.2f} {cpu:6.2f} {seen_s} {entries_s}")


if __name__ == "__main__":
    main()
