"""cpu=wall at 1,000 threads: the cost of wall-clock sampling on java/programs/WallThreads.java (1,000
threads sleeping 5 ms between bits of work, one spinning), against no agent and, where it is built,
async-profiler's `event=wall` at the same interval.

async-profiler is built from its source, not downloaded: `git clone https://github.com/async-profiler/
async-profiler target/async-profiler && make -C target/async-profiler` (a few minutes), or set ASPROF_LIB to
a libasyncProfiler.so. Without it the table has no async-profiler column.
Usage: benches/cpu-samples/wall.sh [runs]   (default 5)"""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from common import AGENT, ROOT, compile_java, fresh_dir, log, overhead, print_paired_table, program_runs  # noqa: E402

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 5


def async_profiler():
    lib = Path(os.environ.get("ASPROF_LIB", ROOT / "target" / "async-profiler" / "build" / "lib" /
                              "libasyncProfiler.so"))
    return lib if lib.is_file() else None


def main():
    classes = compile_java("java/programs/WallThreads.java", out="wall-classes")
    d = fresh_dir("cpu-wall")
    configs = {
        "none": [],
        "wall 50ms": [f"-agentpath:{AGENT}=cpu=wall,file={d}/wall50.txt"],
        "wall 10ms": [f"-agentpath:{AGENT}=cpu=wall,interval=10,file={d}/wall10.txt"],
    }
    asprof = async_profiler()
    if asprof:
        configs["asprof wall 50ms"] = [f"-agentpath:{asprof}=start,event=wall,interval=50ms,file={d}/ap50.txt,collapsed"]
        configs["asprof wall 10ms"] = [f"-agentpath:{asprof}=start,event=wall,interval=10ms,file={d}/ap10.txt,collapsed"]
    else:
        log("async-profiler not built (see this script's doc string): comparing with no agent only")
    results = overhead({"WallThreads 1000": program_runs(classes, "WallThreads", 1000, 400)}, configs, RUNS)
    print_paired_table(f"cpu=wall at 1,000 threads, {RUNS} interleaved runs (ratio to no agent)", results)
    for name in ("wall50.txt", "wall10.txt"):
        text = (d / name).read_text()
        total = text[text.index("CPU SAMPLES BEGIN"):].split("total = ")[1].split(")")[0]
        print(f"{name}: {total} samples")


if __name__ == "__main__":
    main()
