"""cpu=samples uploading every 10 s (otlp= to a local receiver) against cpu=samples writing a file, in steady
state: what continuous profiles add on top of sampling.

Two measurements per round, the two configurations interleaved (file, otlp, file, otlp, …), one JVM each,
CpuSteady for WARM_UP + SECONDS:
- the program's speed: the median time of a round of CpuSteady's three units after the warm-up, otlp's over
  file's of the same round pair (median of the pairs, 95% bootstrap interval) — wide, since separate JVMs
  differ by a few percent;
- the upload work's own CPU time, read from /proc for the agent's two upload threads ("HPROF uploads", which
  takes and encodes each window, and "hprof-upload", which sends it), as a share of the process's CPU time:
  the direct cost, measured to the millisecond.
The receiver is a plain HTTP sink in this script (answers 200, counts bytes; no decoding).

Usage: benches/cpu-samples/upload.sh [seconds] [rounds]   (default 60 s, 3 rounds; JDK 17)
"""
import os
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from common import AGENT, build, compile_java, fresh_dir, java  # noqa: E402

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
WARM_UP = 8.0
UPLOAD_THREADS = ("HPROF uploads", "hprof-upload")
received = {"requests": 0, "bytes": 0}


class Sink(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(n)
        received["requests"] += 1
        received["bytes"] += n
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()


def cpu_ticks(pid):
    """(process CPU ticks, upload threads' CPU ticks) from /proc."""
    total = upload = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            comm = (task / "comm").read_text().strip()
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks = int(fields[11]) + int(fields[12])  # utime + stime
        total += ticks
        if comm in UPLOAD_THREADS:
            upload += ticks
    return total, upload


def run_once(classes, out_dir, options):
    ends_file = out_dir / "ends.txt"
    proc = subprocess.Popen(
        [java(), f"-agentpath:{AGENT}=cpu=samples,{options}", "-cp", str(classes), "CpuSteady",
         str(WARM_UP + SECONDS), str(ends_file)], cwd=out_dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    last = (0, 0)
    while proc.poll() is None:
        try:
            last = cpu_ticks(proc.pid)
        except OSError:
            pass
        time.sleep(0.5)
    stderr = proc.stderr.read()
    if proc.returncode != 0:
        sys.exit(f"CpuSteady failed ({proc.returncode}):\n{stderr[-2000:]}")
    ends = [int(line) for line in ends_file.read_text().split()]
    steady_from = ends[0] + int(WARM_UP * 1e9)
    by_kind = {0: [], 1: [], 2: []}
    for i in range(1, len(ends)):
        if ends[i - 1] >= steady_from:
            by_kind[i % 3].append(ends[i] - ends[i - 1])
    round_ns = sum(statistics.median(d) for d in by_kind.values())
    return round_ns, last, stderr


def bootstrap(ratios, resamples=4000, seed=1):
    import random
    rng = random.Random(seed)
    meds = sorted(statistics.median(rng.choice(ratios) for _ in ratios) for _ in range(resamples))
    return statistics.median(ratios), meds[int(0.025 * resamples)], meds[int(0.975 * resamples) - 1]


def main():
    build()
    classes = compile_java("java/bench/CpuBound.java", "java/bench/CpuSteady.java")
    server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    tick = os.sysconf("SC_CLK_TCK")
    print(f"## cpu=samples uploading every 10 s (otlp= to a local sink) vs writing a file; CpuSteady, JDK 17, "
          f"{ROUNDS} round(s) of {SECONDS:g} s after {WARM_UP:g} s of warm-up", flush=True)
    ratios, shares = [], []
    for r in range(ROUNDS):
        file_round, (file_cpu, _), _ = run_once(classes, fresh_dir(f"upload-file-{r}"), "file=cpu.txt")
        before = dict(received)
        otlp_round, (otlp_cpu, upload_cpu), stderr = run_once(
            classes, fresh_dir(f"upload-otlp-{r}"), f"file=cpu.txt,otlp={url},upload_interval=10s")
        stats = next((l for l in stderr.splitlines() if "uploads sent" in l), "").strip()
        ratios.append(otlp_round / file_round)
        share = 100.0 * upload_cpu / max(otlp_cpu, 1)
        shares.append(share)
        print(f"round {r + 1}: a round of units {file_round / 1e6:.2f} ms (file) vs {otlp_round / 1e6:.2f} ms (otlp), "
              f"ratio {ratios[-1]:.4f}; upload threads {1000 * upload_cpu / tick:.0f} ms of {otlp_cpu / tick:.1f} s "
              f"process CPU ({share:.3f}%); {received['requests'] - before['requests']} requests, "
              f"{received['bytes'] - before['bytes']} bytes; {stats}", flush=True)
    ratio, low, high = bootstrap(ratios)
    print(f"program speed, otlp / file: {ratio:.4f} [{low:.4f}, {high:.4f}] ({100 * (ratio - 1):+.2f}%, "
          f"{ROUNDS} pairs, 95% bootstrap); upload threads' CPU: {statistics.mean(shares):.3f}% of the process "
          f"(goal: at most 0.2 points more than writing a file)")
    server.shutdown()


if __name__ == "__main__":
    main()
