"""cpu=samples end to end, taken apart: where javac's extra CPU time goes beyond the steady state's cost.

Configurations, interleaved round by round (javac compiling java/util, JDK 17, interval 10 ms):
  none            no agent
  DNS only        -XX:+DebugNonSafepoints, no agent (the JIT's extra debug information, which the agent sets)
  quiet agent     cpu=samples with -XX:-DebugNonSafepoints and an interval no thread reaches (1000 s): the
                  agent loaded with its events, class hooks, per-thread clocks and its report, but no signal
  no DNS          cpu=samples, interval 10 ms, -XX:-DebugNonSafepoints
  cpu=samples     as users run it
So: quiet agent − none = load, hooks, clocks, output; no DNS − quiet agent = the signals (handler, stack walks,
kernel); cpu=samples − no DNS = DebugNonSafepoints under the agent. The agent's own timings of each part
(HPROF_CPU_STATS=1) are printed for the last cpu=samples round.

Usage: benches/cpu-samples/startup.sh [rounds]   (default 5; HPROF_BENCH_AGENT=lib measures that agent, unbuilt)
"""
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
import common  # noqa: E402
from common import AGENT, build, fresh_dir, java, javac_workload, print_paired_table  # noqa: E402

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5


def main():
    agent_lib = os.environ.get("HPROF_BENCH_AGENT")
    if agent_lib is None:
        build()
    javac_args, files = javac_workload()
    out = fresh_dir("startup-javac-out")
    prof = fresh_dir("startup-agent")
    javac = str(Path(java()).with_name("javac"))
    dns = ["-XX:+UnlockDiagnosticVMOptions", "-XX:+DebugNonSafepoints"]
    no_dns = ["-XX:+UnlockDiagnosticVMOptions", "-XX:-DebugNonSafepoints"]
    agent = f"-agentpath:{agent_lib or AGENT}=cpu=samples,file={prof}/out.txt,interval="
    configs = {
        "none": [],
        "DNS only": dns,
        "quiet agent": no_dns + [agent + "1000000"],
        "no DNS": no_dns + [agent + "10"],
        "cpu=samples": [agent + "10"],
    }
    stats = {}
    results = {name: [] for name in configs}
    for i in range(ROUNDS):
        common.log(f"round {i + 1}/{ROUNDS}: {os.getloadavg()[0]:.1f} load")
        for name, extra in configs.items():
            cmd = [javac] + [f"-J{e}" for e in extra] + javac_args + [str(out)] + files
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                  env=dict(os.environ, HPROF_CPU_STATS="1"))
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if proc.returncode != 0:
                sys.exit(f"{name} failed:\n{proc.stderr[-2000:]}")
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            results[name].append((wall, cpu))
            stats[name] = [line for line in proc.stderr.splitlines() if "agent time" in line or "startup" in line]
            common.log(f"  {name}: {wall:.2f} s wall, {cpu:.2f} s CPU")
    print_paired_table(f"## cpu=samples end to end, taken apart ({ROUNDS} interleaved rounds, javac java/util, "
                       f"JDK 17; ratio = median of the rounds' ratios to no agent [95% bootstrap interval])",
                       {"javac java/util": results})
    for name in ("quiet agent", "cpu=samples"):
        for line in stats.get(name, []):
            print(f"{name}: {line.split('HPROF')[-1].strip()}")


if __name__ == "__main__":
    main()
