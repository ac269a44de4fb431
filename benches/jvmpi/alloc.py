"""The JVMPI layer's OBJECT_ALLOC cost against heap=sites', on a multi-threaded allocation-heavy workload:
H2Bank (java/bench; an in-memory H2 database, 4 JDBC threads, 100,000 transactions, ~37 M allocations)
with no agent, with heap=sites (exact), and with the layer running AllocCounter (java/native/jvmpi), an
agent that only counts OBJECT_ALLOC events.

Usage: benches/jvmpi/alloc.py [rounds] [NAME=/path/libjvmpi.so ...]   (default 5 interleaved rounds; each
NAME=path adds another build of the layer, e.g. an older one, running the same agent)
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
import common  # noqa: E402
from caps import BUILT, build_agent  # noqa: E402
from common import AGENT, build, fresh_dir, h2_runs, print_paired_table  # noqa: E402

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
OTHER_LAYERS = dict(a.split("=", 1) for a in sys.argv[2:])


def main():
    build()
    agent = build_agent("AllocCounter")
    out = fresh_dir("jvmpi-alloc")
    configs = {
        "none": [],
        "heap=sites exact": [f"-agentpath:{AGENT}=heap=sites,file={out}/sites.txt"],
        "JVMPI AllocCounter": [f"-agentpath:{BUILT}={agent}"],
    }
    for name, layer in OTHER_LAYERS.items():
        configs[f"JVMPI {name}"] = [f"-agentpath:{layer}={agent}"]
    results = common.overhead({"H2 4 threads": h2_runs()}, configs, RUNS)
    print_paired_table(f"## OBJECT_ALLOC through the JVMPI layer vs heap=sites ({RUNS} interleaved rounds, JDK 17; "
                       "ratio = median of the rounds' ratios to no agent [95% bootstrap interval])", results)


if __name__ == "__main__":
    main()
