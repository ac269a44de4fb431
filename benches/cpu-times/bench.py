"""cpu=times benchmark: overhead of exact method timing by bytecode injection against no agent and cpu=samples,
on javac compiling java/util (JDK 17's src.zip) and on a CPU-bound program, configurations interleaved."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
import common  # noqa: E402
from common import AGENT, build, compile_java, fresh_dir, javac_runs, print_paired_table, program_runs  # noqa: E402

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
# HPROF's own CpuBound figure (54x) came from a run of about 10 s without an agent.
BOUND_ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 100


def overhead(classes):
    agent_dir = fresh_dir("cpu-times-agent")
    configs = {
        "none": [],
        "cpu=samples": [f"-agentpath:{AGENT}=cpu=samples,interval=10,file={agent_dir}/samples.txt"],
        "cpu=times": [f"-agentpath:{AGENT}=cpu=times,file={agent_dir}/times.txt"],
        # The first design, kept for comparison: native probes through JNI.
        "cpu=times JNI probes": ["ENV:HPROF_CPU_TIMES_PROBES=jni",
                                 f"-agentpath:{AGENT}=cpu=times,file={agent_dir}/times-jni.txt"],
    }
    workloads = {"javac java/util": javac_runs("cpu-times"),
                 f"CpuBound {BOUND_ROUNDS}": program_runs(classes, "CpuBound", BOUND_ROUNDS)}
    return common.overhead(workloads, configs, RUNS)


def main():
    build()
    classes = compile_java("java/bench/CpuBound.java")
    print_paired_table(f"## cpu=times overhead ({RUNS} interleaved rounds, JDK 17; ratio = median of the rounds' "
                       "ratios to no agent [95% bootstrap interval])", overhead(classes))


if __name__ == "__main__":
    main()
