"""cpu=samples benchmark: accuracy (async vs HPROF's safepoint sampler) and overhead (javac, CPU-bound)."""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
import common  # noqa: E402
from common import AGENT, build, compile_java, fresh_dir, java, javac_runs, print_paired_table, program_runs, timed  # noqa: E402

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 10
# About 10 s: long enough that JVM start-up and warm-up do not make the whole run.
BOUND_ROUNDS = 400


def samples_by_method(report):
    section = report[report.index("CPU SAMPLES BEGIN"):report.index("CPU SAMPLES END")]
    total = int(re.search(r"total = (\d+)", section).group(1))
    by = {}
    for line in section.splitlines()[2:]:
        w = line.split()
        if len(w) >= 6:
            by[w[5]] = by.get(w[5], 0) + int(w[3])
    return total, by


def traces_with(report, needle):
    serials, current = set(), None
    for line in report.splitlines():
        if line.startswith("TRACE "):
            current = int(line.split()[1].rstrip(":"))
        elif line.startswith("\t") and needle in line and current is not None:
            serials.add(current)
    return serials


def accuracy(classes, sampler, seconds=20):
    d = fresh_dir(f"cpu-accuracy-{sampler}")
    _, proc = timed([java(), f"-agentpath:{AGENT}=cpu=samples,sampler={sampler},depth=8,file={d}/out.txt",
                     "-cp", str(classes), "CpuAccuracy", str(seconds)])
    own = dict(kv.split("=") for kv in proc.stdout.split("own-share")[1].split())
    report = (d / "out.txt").read_text()
    total, by = samples_by_method(report)
    alpha, beta = by.get("CpuAccuracy.hotAlpha", 0), by.get("CpuAccuracy.hotBeta", 0)
    idle_traces = traces_with(report, "accept")
    section = report[report.index("CPU SAMPLES BEGIN"):]
    idle = sum(int(l.split()[3]) for l in section.splitlines()[2:]
               if len(l.split()) >= 6 and l.split()[4].isdigit() and int(l.split()[4]) in idle_traces)
    promised = float(own["cpu-ms"]) / 10
    return {
        "sampler": sampler,
        "alpha_share": 100 * alpha / max(1, alpha + beta),
        "own_alpha": float(own["hotAlpha"]),
        "idle_share": 100 * idle / max(1, total),
        "yield": (alpha + beta) / promised,
        "total": total,
    }


def overhead(classes):
    """Every configuration RUNS times, interleaved; wall and CPU time of the whole process tree."""
    jfr_dir = fresh_dir("cpu-jfr")
    agent_dir = fresh_dir("cpu-agent")
    configs = {
        "none": [],
        "cpu=samples": [f"-agentpath:{AGENT}=cpu=samples,interval=10,file={agent_dir}/out.txt"],
        "JFR profile": [f"-XX:StartFlightRecording=settings=profile,filename={jfr_dir}/rec.jfr"],
        # What the JIT's extra debug information costs on its own, without any agent.
        "DebugNonSafepoints": ["-XX:+UnlockDiagnosticVMOptions", "-XX:+DebugNonSafepoints"],
    }
    workloads = {"javac java/util": javac_runs("cpu"),
                 f"CpuBound {BOUND_ROUNDS}": program_runs(classes, "CpuBound", BOUND_ROUNDS)}
    return common.overhead(workloads, configs, RUNS)


def main():
    build()
    classes = compile_java("java/programs/CpuAccuracy.java", "java/bench/CpuBound.java")
    print("## cpu=samples accuracy (CpuAccuracy, 20 s; own = the program's ThreadMXBean CPU clocks)")
    print(f"{'sampler':<10} {'hotAlpha share':>15} {'own':>7} {'error pp':>9} {'idle share':>11} {'yield':>6} {'samples':>8}")
    for sampler in ("async", "safepoint"):
        a = accuracy(classes, sampler)
        print(f"{a['sampler']:<10} {a['alpha_share']:>14.1f}% {a['own_alpha']:>6.1f}% "
              f"{a['alpha_share'] - a['own_alpha']:>+9.1f} {a['idle_share']:>10.1f}% {a['yield']:>6.2f} {a['total']:>8}")
    print()
    print_paired_table(f"## cpu=samples overhead ({RUNS} interleaved rounds, JDK 17; ratio = median of the rounds' "
                       "ratios to no agent [95% bootstrap interval])", overhead(classes))


if __name__ == "__main__":
    main()
