"""cstack's cost: javac compiling java/util under cpu=samples with Java frames only (cstack=n), with native
and kernel frames (cstack=y), and under async-profiler's cpu mode with its DWARF native stacks, against no
agent. Every configuration writes folded stacks. async-profiler is built from its source by
`benches/cpu-samples/cstack.sh` (skipped, and said so, where it cannot be).

Usage: benches/cpu-samples/cstack.sh [rounds] [async-profiler's libasyncProfiler.so]   (default 3 rounds)
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
import common  # noqa: E402
from common import AGENT, build, fresh_dir, javac_runs, log, print_paired_table  # noqa: E402

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
ASYNC_PROFILER = Path(sys.argv[2]) if len(sys.argv) > 2 else None


def folded_stats(path):
    """(samples, % of samples whose stack holds a C++ (`::`), kernel (`_[k]`) or unnamed library frame)."""
    total = native = 0
    for line in Path(path).read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        total += int(n)
        if any("::" in f or f.endswith("_[k]") or f.startswith("[lib") for f in stack.split(";")):
            native += int(n)
    return total, 100.0 * native / max(1, total)


def main():
    build()
    d = fresh_dir("cstack-bench")
    configs = {
        "none": [],
        "cstack=n": [f"-agentpath:{AGENT}=cpu=samples,interval=10,cstack=n,file={d}/n.txt,collapsed={d}/n.folded"],
        "cstack=y": [f"-agentpath:{AGENT}=cpu=samples,interval=10,cstack=y,file={d}/y.txt,collapsed={d}/y.folded"],
    }
    if ASYNC_PROFILER and ASYNC_PROFILER.exists():
        configs["async-profiler cstack"] = [
            f"-agentpath:{ASYNC_PROFILER}=start,event=cpu,interval=10ms,cstack=dwarf,collapsed,file={d}/ap.folded"
        ]
    else:
        log("async-profiler not built: its column is left out")
    results = common.overhead({"javac java/util": javac_runs("cstack")}, configs, RUNS)
    print_paired_table(f"## cstack overhead ({RUNS} interleaved rounds, JDK 17, interval 10 ms; ratio = median of "
                       "the rounds' ratios to no agent [95% bootstrap interval])", results)
    print()
    print("folded file of the last round: samples, % whose stack holds C++, kernel or library frames")
    for name, f in (("cstack=n", "n.folded"), ("cstack=y", "y.folded"), ("async-profiler cstack", "ap.folded")):
        if (d / f).exists():
            total, share = folded_stats(d / f)
            print(f"  {name:<22} {total:>7} samples, {share:5.1f}% with native frames")


if __name__ == "__main__":
    main()
