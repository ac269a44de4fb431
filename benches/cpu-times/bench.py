"""cpu=times benchmark: overhead of exact method timing by bytecode injection against no agent and cpu=samples,
on javac compiling java/util (JDK 17's src.zip) and on a CPU-bound program, configurations interleaved."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from common import (AGENT, build, compile_java, fresh_dir, interleaved_samples, java, javac_workload, log,  # noqa: E402
                    print_paired_table, wall_and_cpu)

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
# HPROF's own CpuBound figure (54x) came from a run of about 10 s without an agent.
BOUND_ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 100


def overhead(classes):
    javac_args, files = javac_workload()
    agent_dir = fresh_dir("cpu-times-agent")
    out = fresh_dir("cpu-times-javac-out")
    javac = str(Path(java()).with_name("javac"))

    def run_javac(extra):
        return lambda: wall_and_cpu([javac] + [f"-J{e}" for e in extra] + javac_args + [str(out)] + files)

    def run_bound(extra):
        return lambda: wall_and_cpu([java()] + extra + ["-cp", str(classes), "CpuBound", str(BOUND_ROUNDS)])

    configs = {
        "none": [],
        "cpu=samples": [f"-agentpath:{AGENT}=cpu=samples,interval=10,file={agent_dir}/samples.txt"],
        "cpu=times": [f"-agentpath:{AGENT}=cpu=times,file={agent_dir}/times.txt"],
    }
    results = {}
    for workload, runner in (("javac java/util", run_javac), (f"CpuBound {BOUND_ROUNDS}", run_bound)):
        log(f"overhead: {workload}")
        results[workload] = interleaved_samples({name: runner(extra) for name, extra in configs.items()}, RUNS)
    return results


def main():
    build()
    classes = compile_java("java/bench/CpuBound.java")
    print_paired_table(f"## cpu=times overhead ({RUNS} interleaved rounds, JDK 17; ratio = median of the rounds' "
                       "ratios to no agent [95% bootstrap interval])", overhead(classes))


if __name__ == "__main__":
    main()
