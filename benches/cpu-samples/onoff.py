"""cpu=samples, steady state: the sampler's cost inside one warmed-up JVM, sampling switched off and on.

Run-to-run noise on this machine (±20% for javac, ±25% for a 10-second program) hides a cost of a few
percent between separate runs. Here one JVM runs CpuBound's work in small timed units (CpuSteady) for a
minute with the agent on `net=`; this script is the front end: after a warm-up it switches CPU sampling
off and on every PHASE seconds (CONTROL commands, which stop and restart the threads' CPU clocks), and
compares the program's speed in each "on" phase with the "off" phase next to it, so that the machine's
drift hits both alike. What this measures: the sampler's signals, stack walks and resolver thread. What
it cannot: the JIT's extra debug information (DebugNonSafepoints), set for the whole run.

Usage: benches/cpu-samples/onoff.sh [seconds] [phase]   (default 60 s, 1 s phases)
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
from common import AGENT, build, compile_java, fresh_dir, java, paired_ratio  # noqa: E402

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
PHASE = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
# "control": every switch turns sampling on, to see the method's own bias (expect 1.00).
CONTROL_RUN = len(sys.argv) > 3 and sys.argv[3] == "control"
WARM_UP = 8.0
# Units that end this soon after a switch are left out: the command may still be on its way.
GUARD_NS = 20_000_000

CONTROL = 0x08
CPU_SAMPLING_ON, CPU_SAMPLING_OFF = 0x3, 0x4


def control(serial, sub):
    """A CONTROL command for every thread (thread object id 0, 8-byte identifiers)."""
    payload = struct.pack(">HQ", sub, 0)
    return struct.pack(">BII", CONTROL, serial, len(payload)) + payload


def run_once(classes, out_dir):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    ends_file = out_dir / "ends.txt"
    proc = subprocess.Popen(
        [java(), f"-agentpath:{AGENT}=net=127.0.0.1:{port},cpu=samples,interval=10", "-cp", str(classes),
         "CpuSteady", str(WARM_UP + SECONDS), str(ends_file)],
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


def main():
    build()
    classes = compile_java("java/bench/CpuBound.java", "java/bench/CpuSteady.java")
    out_dir = fresh_dir("cpu-onoff")
    ends, switches, received, stats = run_once(classes, out_dir)
    (out_dir / "switches.txt").write_text("".join(f"{t} {int(on)}\n" for t, on in switches))
    phases = phase_times(ends, switches)
    # Pair each "on" phase with the "off" phase just before it.
    off_times, on_times = [], []
    for (on_a, mean_a, _), (on_b, mean_b, _) in zip(phases, phases[1:]):
        if not on_a and on_b:
            off_times.append(mean_a)
            on_times.append(mean_b)
    ratio, low, high = paired_ratio(off_times, on_times)
    units = sum(n for _, _, n in phases)
    print(f"## cpu=samples steady state (CpuSteady, one JVM, JDK 17, interval=10; sampling switched every {PHASE:g} s "
          f"for {SECONDS:g} s after {WARM_UP:g} s of warm-up)")
    print(f"phase pairs {len(on_times)}, units timed {units}, a round of the three kinds of unit "
          f"{statistics.median(off_times) / 1e6:.2f} ms with sampling off; profile stream {received} bytes")
    print(f"round time, sampling on / off: {ratio:.4f} [{low:.4f}, {high:.4f}] (median of the pairs' ratios, 95% "
          f"bootstrap interval): overhead {100 * (ratio - 1):+.2f}%" + (" (control: sampling never off)" if CONTROL_RUN else ""))
    print(stats.strip())


if __name__ == "__main__":
    main()
