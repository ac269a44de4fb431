"""cpu=samples, steady state: the sampler's cost inside one warmed-up JVM, sampling switched off and on.

Run-to-run noise on this machine (±20% for javac, ±25% for a 10-second program) hides a cost of a few
percent between separate runs. Here one JVM runs CpuBound's work in small timed units (CpuSteady) for a
minute with the agent on `net=`; this script is the front end: after a warm-up it switches CPU sampling
off and on every PHASE seconds (CONTROL commands, which stop and restart the threads' CPU clocks), and
compares the program's speed in each "on" phase with the "off" phase next to it, so that the machine's
drift hits both alike. What this measures: the sampler's signals, stack walks and resolver thread. What
it cannot: the JIT's extra debug information (DebugNonSafepoints), set for the whole run.

Usage: benches/cpu-samples/onoff.sh [seconds] [phase] [runs] [control|jfr]
  (default 60 s, 0.2 s phases, 1 run; HPROF_BENCH_INTERVAL=ms sets the sampling interval, default 10;
  HPROF_BENCH_WORKLOAD=javac runs JavacSteady instead of CpuSteady; `jfr` measures JFR's own sampler, switched
  by the program itself; HPROF_SAMPLER_DRY=1 makes the agent's handler take no stack, to weigh the signals
  alone; agent options go in HPROF_BENCH_OPTIONS, e.g. clock=posix)
With several runs, every run's phase pairs are pooled and the interval comes from a two-level bootstrap
(runs, then pairs within each run), since runs differ from one another more than pairs within a run do.
"""
import os
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from common import AGENT, TARGET, build, compile_java, fresh_dir, java, javac_workload  # noqa: E402

NUMBERS = [a for a in sys.argv[1:] if a not in ("control", "jfr")]
SECONDS = float(NUMBERS[0]) if len(NUMBERS) > 0 else 60.0
# Short phases follow the machine's drift more closely: 0.2 s gave intervals a third as wide as 1 s.
PHASE = float(NUMBERS[1]) if len(NUMBERS) > 1 else 0.2
RUNS = int(NUMBERS[2]) if len(NUMBERS) > 2 else 1
# "control": every switch turns sampling on, to see the method's own bias (expect 1.00).
CONTROL_RUN = "control" in sys.argv[1:]
# "jfr": the same measurement of JFR's own sampler (jdk.ExecutionSample every 10 ms, as settings=profile),
# which CpuSteady switches on and off itself through the jdk.jfr API; no agent.
JFR_RUN = "jfr" in sys.argv[1:]
# The sampling interval in ms (HPROF_BENCH_INTERVAL): a short one multiplies the per-sample cost, to measure
# it above this method's resolution and scale it back to interval=10.
INTERVAL = int(os.environ.get("HPROF_BENCH_INTERVAL", "10"))
# The program (HPROF_BENCH_WORKLOAD): "cpu" — CpuSteady, CpuBound's sort, map and matrix units; "javac" —
# JavacSteady, javac compiling three of java.util's sources in turn (deep stacks, many allocations).
WORKLOAD = os.environ.get("HPROF_BENCH_WORKLOAD", "cpu")
OPTIONS = "," + os.environ["HPROF_BENCH_OPTIONS"] if os.environ.get("HPROF_BENCH_OPTIONS") else ""
WARM_UP = 20.0 if WORKLOAD == "javac" else 8.0  # javac's JIT takes longer to settle
if JFR_RUN and WORKLOAD != "cpu":
    sys.exit("jfr: only CpuSteady switches JFR's sampler itself (HPROF_BENCH_WORKLOAD=cpu)")
# Units that end this soon after a switch are left out: the command may still be on its way.
GUARD_NS = 20_000_000

CONTROL = 0x08
CPU_SAMPLING_ON, CPU_SAMPLING_OFF = 0x3, 0x4


def control(serial, sub):
    """A CONTROL command for every thread (thread object id 0, 8-byte identifiers)."""
    payload = struct.pack(">HQ", sub, 0)
    return struct.pack(">BII", CONTROL, serial, len(payload)) + payload


def run_jfr_once(classes, out_dir):
    """CpuSteady switching JFR's sampler itself; returns what run_once does."""
    ends_file, switches_file = out_dir / "ends.txt", out_dir / "switches.txt"
    proc = subprocess.run(
        [java(), "-cp", str(classes), "CpuSteady", str(WARM_UP + SECONDS), str(ends_file), str(switches_file),
         str(WARM_UP), str(PHASE)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        timeout=WARM_UP + SECONDS + 60)
    if proc.returncode != 0:
        sys.exit(f"CpuSteady failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    ends = [int(line) for line in ends_file.read_text().split()]
    switches = [(int(t), on == "1") for t, on in (line.split() for line in switches_file.read_text().splitlines())]
    return ends, switches, 0, "JFR: jdk.ExecutionSample every 10 ms, in memory"


def run_once(classes, out_dir, program):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    ends_file = out_dir / "ends.txt"
    proc = subprocess.Popen(
        [java(), f"-agentpath:{AGENT}=net=127.0.0.1:{port},cpu=samples,interval={INTERVAL}{OPTIONS}", "-cp", str(classes),
         program[0], str(WARM_UP + SECONDS), str(ends_file)] + program[1:],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ, HPROF_CPU_STATS="1"))
    server.settimeout(30)
    conn, _ = server.accept()
    received = bytearray()

    def drain():
        while chunk := conn.recv(1 << 16):
            received.extend(chunk)
    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    start = time.monotonic_ns()
    switches = []  # (monotonic ns, sampling on?)
    serial = 1
    deadline = start + int((WARM_UP + SECONDS - PHASE) * 1e9)
    next_switch = start + int(WARM_UP * 1e9)
    on = True
    while next_switch < deadline:
        time.sleep(max(0.0, (next_switch - time.monotonic_ns()) / 1e9))
        on = not on
        conn.sendall(control(serial, CPU_SAMPLING_ON if on or CONTROL_RUN else CPU_SAMPLING_OFF))
        switches.append((time.monotonic_ns(), on))
        serial += 1
        next_switch += int(PHASE * 1e9)
    stdout, stderr = proc.communicate(timeout=WARM_UP + SECONDS + 60)
    reader.join(timeout=10)
    conn.close()
    server.close()
    if proc.returncode != 0:
        sys.exit(f"CpuSteady failed ({proc.returncode}):\n{stderr[-2000:]}")
    ends = [int(line) for line in ends_file.read_text().split()]
    stats = next((line for line in stderr.splitlines() if "agent time" in line), "")
    return ends, switches, len(received), stats


def phase_times(ends, switches):
    """Each phase between two switches: (sampling on?, time of one round of the three kinds of unit, units).
    A kind's time is its median in the phase, so that a GC pause or a hiccup of the machine inside one unit
    does not weigh on the phase."""
    phases = []
    for (t0, on), (t1, _) in zip(switches, switches[1:]):
        by_kind = {0: [], 1: [], 2: []}
        for i in range(1, len(ends)):
            if ends[i - 1] >= t0 + GUARD_NS and ends[i] <= t1:
                by_kind[i % 3].append(ends[i] - ends[i - 1])
        if all(len(d) >= 3 for d in by_kind.values()):
            phases.append((on, sum(statistics.median(d) for d in by_kind.values()), sum(map(len, by_kind.values()))))
    return phases


def pair_ratios(phases):
    """Each "on" phase's round time over that of the "off" phase just before it."""
    return [b[1] / a[1] for a, b in zip(phases, phases[1:]) if not a[0] and b[0]]


def pooled_ratio(runs, resamples=4000, seed=1):
    """Median of every run's pair ratios pooled, and a 95% two-level bootstrap interval (runs, then pairs)."""
    import random
    rng = random.Random(seed)
    pooled = [r for run in runs for r in run]
    medians = []
    for _ in range(resamples):
        sample = []
        for run in (rng.choice(runs) for _ in runs):
            sample.extend(rng.choice(run) for _ in run)
        medians.append(statistics.median(sample))
    medians.sort()
    return statistics.median(pooled), medians[int(0.025 * resamples)], medians[int(0.975 * resamples) - 1]


def main():
    build()
    classes = compile_java("java/bench/CpuBound.java", "java/bench/CpuSteady.java", "java/bench/JavacSteady.java")
    if WORKLOAD == "javac":
        javac_workload()  # unpacks the sources
        program = ["JavacSteady", str(TARGET / "javac-src")]
    else:
        program = ["CpuSteady"]
    label = " (control: sampling never off)" if CONTROL_RUN else " (JFR's sampler, not the agent)" if JFR_RUN else ""
    print(f"## cpu=samples steady state ({program[0]}, one JVM per run, JDK 17, interval={INTERVAL}; sampling switched "
          f"every {PHASE:g} s for {SECONDS:g} s after {WARM_UP:g} s of warm-up){label}")
    runs = []
    for run in range(RUNS):
        out_dir = fresh_dir(f"cpu-onoff-{run}")
        if JFR_RUN:
            ends, switches, received, stats = run_jfr_once(classes, out_dir)
        else:
            ends, switches, received, stats = run_once(classes, out_dir, program)
        (out_dir / "switches.txt").write_text("".join(f"{t} {int(on)}\n" for t, on in switches))
        phases = phase_times(ends, switches)
        ratios = pair_ratios(phases)
        runs.append(ratios)
        off_round = statistics.median(t for on, t, _ in phases if not on)
        ratio, low, high = pooled_ratio([ratios])
        print(f"run {run + 1}: {len(ratios)} phase pairs, {sum(n for _, _, n in phases)} units, a round "
              f"{off_round / 1e6:.2f} ms with sampling off, profile stream {received} bytes; on / off {ratio:.4f} "
              f"[{low:.4f}, {high:.4f}]", flush=True)
        print(f"       {stats.strip()}", flush=True)
    ratio, low, high = pooled_ratio(runs)
    print(f"round time, sampling on / off: {ratio:.4f} [{low:.4f}, {high:.4f}] (median of {sum(map(len, runs))} "
          f"pairs' ratios from {RUNS} run(s), 95% bootstrap interval): overhead {100 * (ratio - 1):+.2f}%{label}")


if __name__ == "__main__":
    main()
