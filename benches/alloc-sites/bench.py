"""heap=sites benchmark: exact counts on AllocSites, and overhead on javac and an allocation-heavy program
(no agent vs exact mode by the JVM's event vs exact mode by bytecode probes vs sampled mode vs JFR's allocation
sampling). `run.sh N probes`: only no agent vs the event vs the probes, on javac and H2."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
import common  # noqa: E402
from common import (AGENT, build, compile_java, fresh_dir, h2_runs, java, javac_runs, print_paired_table,  # noqa: E402
                    program_runs, timed)

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 8
PROBES_ONLY = len(sys.argv) > 2 and sys.argv[2] == "probes"
EXPECTED = {  # class: (allocated objects, live objects) as AllocSites makes them
    "AllocSites$Widget": (100_000, 25_000),
    "AllocSites$Gadget": (70_000, 0),
    "long[]": (1_000, 0),
    "AllocSites$Reflected": (500, 500),
}


def site_totals(report):
    """class → [live objs, alloc objs] summed over the SITES rows."""
    totals = {}
    body = report[report.index("SITES BEGIN"):report.index("SITES END")]
    for line in body.splitlines()[3:]:
        f = line.split()
        if len(f) >= 9:
            # long[] rows also hold the JDK's own long arrays: count only those of length 333 (2,680 bytes).
            if f[8] == "long[]" and int(f[5]) != 2680 * int(f[6]):
                continue
            t = totals.setdefault(f[8], [0, 0])
            t[0] += int(f[4])
            t[1] += int(f[6])
    return totals


def exactness(classes, probe="n"):
    out = fresh_dir("sites-exact")
    timed([java(), f"-agentpath:{AGENT}=heap=sites,cutoff=0,alloc_probe={probe},file={out}/sites.txt", "-cp",
           str(classes), "AllocSites"])
    totals = site_totals((out / "sites.txt").read_text())
    rows = []
    for cls, (alloc, live) in EXPECTED.items():
        got_live, got_alloc = totals.get(cls, [0, 0])
        rows.append((cls, alloc, got_alloc, live, got_live))
    return rows


def overhead(classes):
    jfr_dir = fresh_dir("sites-jfr")
    agent_dir = fresh_dir("sites-agent")
    configs = {
        "none": [],
        "exact depth=4": [f"-agentpath:{AGENT}=heap=sites,depth=4,alloc_probe=n,file={agent_dir}/exact.txt"],
        "probes depth=4": [f"-agentpath:{AGENT}=heap=sites,depth=4,alloc_probe=y,file={agent_dir}/probes.txt"],
        "sampled 512k": [f"-agentpath:{AGENT}=heap=sites,depth=4,alloc_interval=512k,file={agent_dir}/sampled.txt"],
        "JFR profile": [f"-XX:StartFlightRecording=settings=profile,filename={jfr_dir}/rec.jfr"],
    }
    workloads = {"javac java/util": javac_runs("sites"), "AllocSites 60": program_runs(classes, "AllocSites", 60),
                 "H2 4 threads": h2_runs()}
    if PROBES_ONLY:
        configs = {k: v for k, v in configs.items() if k in ("none", "exact depth=4", "probes depth=4")}
        del workloads["AllocSites 60"]
    return common.overhead(workloads, configs, RUNS)


def memory_per_object(classes, n=2_000_000):
    """Peak RSS with and without the agent on a program that keeps `n` objects, per tracked object."""
    out = fresh_dir("sites-memory")

    def peak_kb(extra):
        _, proc = timed(["/usr/bin/time", "-f", "%M", java(), "-Xmx2g", "-Xms2g"] + extra
                        + ["-cp", str(classes), "KeepMany", str(n)])
        return int(proc.stderr.strip().splitlines()[-1])

    base = peak_kb([])
    exact = peak_kb([f"-agentpath:{AGENT}=heap=sites,file={out}/m.txt"])
    return base, exact, (exact - base) * 1024 / n


def main():
    build()
    classes = compile_java("java/programs/AllocSites.java", "java/bench/KeepMany.java")
    print("## heap=sites exactness (AllocSites: the program's own counts vs SITES, cutoff=0, JDK 17)")
    print(f"{'class':<22} {'alloc own':>10} {'SITES':>8} {'live own':>9} {'SITES':>8}")
    for probe in ("n", "y"):
        print(f"alloc_probe={probe}")
        for cls, alloc, got_alloc, live, got_live in exactness(classes, probe):
            print(f"{cls:<22} {alloc:>10} {got_alloc:>8} {live:>9} {got_live:>8}")
    print()
    if not PROBES_ONLY:
        base, exact, per_object = memory_per_object(classes)
        print("## heap=sites memory (KeepMany: 2,000,000 live objects, -Xms2g, peak RSS)")
        print(f"no agent {base / 1024:.0f} MiB, exact mode {exact / 1024:.0f} MiB: {per_object:.0f} bytes per tracked "
              "object")
        print()
    print_paired_table(f"## heap=sites overhead ({RUNS} interleaved rounds, JDK 17; ratio = median of the rounds' "
                       "ratios to no agent [95% bootstrap interval])", overhead(classes))


if __name__ == "__main__":
    main()
