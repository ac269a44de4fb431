"""cpu=flat (-Xprof's flat profile) overhead on javac, against no agent and against cpu=samples, at
interval=10: every configuration RUNS times, interleaved (ABCABC…), so that the machine's drift hits all
alike; ratios are paired per round. Also checks that each cpu=flat run wrote its profile.

Usage: benches/cpu-samples/flat.sh [runs]   (default 8 interleaved rounds)
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from common import AGENT, build, fresh_dir, javac_runs, overhead, print_paired_table  # noqa: E402

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 8


def main():
    build()
    agent_dir = fresh_dir("flat-agent")
    configs = {
        "none": [],
        "cpu=samples": [f"-agentpath:{AGENT}=cpu=samples,interval=10,file={agent_dir}/samples.txt"],
        "cpu=flat": [f"-agentpath:{AGENT}=cpu=flat,interval=10,file={agent_dir}/flat.txt"],
    }
    results = overhead({"javac java/util": javac_runs("flat")}, configs, RUNS)
    flat = (agent_dir / "flat.txt").read_text()
    if "Flat profile of" not in flat or "Global summary of" not in flat:
        sys.exit("cpu=flat wrote no flat profile")
    print_paired_table(f"## cpu=flat overhead ({RUNS} interleaved rounds, JDK 17, interval=10; ratio = median of the "
                       "rounds' ratios to no agent [95% bootstrap interval])", results)
    print()
    print_paired_table("## cpu=flat against cpu=samples (same rounds)",
                       {k: {"cpu=samples": v["cpu=samples"], "cpu=flat": v["cpu=flat"]} for k, v in results.items()},
                       base="cpu=samples")


if __name__ == "__main__":
    main()
