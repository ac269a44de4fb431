"""Shared helpers for the benchmark scripts: building, the JDK, Java programs, timing with medians."""
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET = ROOT / "target" / "bench"
JDK17 = Path(os.environ.get("HPROF_JDK17_HOME", "/usr/lib/jvm/java-17-openjdk-amd64"))
AGENT = ROOT / "target" / "release" / "libhprof.so"
HPROF = ROOT / "target" / "release" / "hprof"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def build():
    log("building the release artifacts ...")
    subprocess.run(["cargo", "build", "--release", "--workspace"], cwd=ROOT, check=True)


def java(jdk=JDK17):
    return str(jdk / "bin" / "java")


def compile_java(*sources, out="classes"):
    """Compiles Java sources (paths relative to the repo) for release 17; returns the class directory."""
    dest = TARGET / out
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run([str(JDK17 / "bin" / "javac"), "--release", "17", "-g", "-d", str(dest)]
                   + [str(ROOT / s) for s in sources], check=True)
    return dest


def ensure_apt(package, probe):
    """Installs a Debian package if `probe` (a path) is missing."""
    if Path(probe).exists():
        return
    log(f"installing {package} ...")
    subprocess.run(["apt-get", "install", "-y", "-q", package], check=True,
                   env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})


def javac_workload():
    """java/util/*.java from JDK 17's src.zip (Debian package openjdk-17-source): returns the javac
    arguments that compile it, about 30 million allocations and 20 s of CPU."""
    src_zip = JDK17 / "lib" / "src.zip"
    ensure_apt("openjdk-17-source", src_zip)
    src = TARGET / "javac-src"
    if not (src / "java.base" / "java" / "util" / "HashMap.java").exists():
        with zipfile.ZipFile(src_zip) as z:
            for name in z.namelist():
                if name.startswith("java.base/java/util/"):
                    z.extract(name, src)
    files = sorted(str(p) for p in (src / "java.base" / "java" / "util").glob("*.java"))
    return ["-nowarn", "--patch-module", f"java.base={src / 'java.base'}", "-d"], files


def timed(cmd, cwd=None, env=None):
    """Runs a command; returns (wall seconds, completed process)."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return wall, proc


def split_env(extra):
    """A configuration's JVM options may include `ENV:NAME=VALUE` items: they set the JVM's environment
    instead. Returns (options, environment for the run)."""
    env = dict(os.environ)
    options = []
    for e in extra:
        if e.startswith("ENV:"):
            name, _, value = e[4:].partition("=")
            env[name] = value
        else:
            options.append(e)
    return options, env


def wall_and_cpu(cmd, env=None):
    """Runs a command; returns (wall seconds, CPU seconds of the process tree: user + system). CPU time is
    the steadier figure when other work shares the machine."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, _ = timed(cmd, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def javac_runs(name):
    """Runs of javac compiling java/util (see `javac_workload`) under extra JVM options: returns
    `run(extra)`, which gives a function that makes one run and returns its (wall, CPU) seconds. `name`
    keys the directory the classes are written to."""
    javac_args, files = javac_workload()
    out = fresh_dir(f"{name}-javac-out")
    javac = str(Path(java()).with_name("javac"))

    def run(extra):
        options, env = split_env(extra)
        return lambda: wall_and_cpu([javac] + [f"-J{e}" for e in options] + javac_args + [str(out)] + files, env)
    return run


H2_JAR = Path("/usr/share/java/h2.jar")


def h2_runs(transactions=100_000, threads=4):
    """Runs of java/bench/H2Bank.java (an in-memory H2 bank, `threads` JDBC connections, `transactions`
    transfers; Debian's libh2-java) under extra JVM options, as `javac_runs` gives them."""
    ensure_apt("libh2-java", H2_JAR)
    dest = TARGET / "h2-classes"
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run([str(JDK17 / "bin" / "javac"), "--release", "17", "-cp", str(H2_JAR), "-d", str(dest),
                    str(ROOT / "java/bench/H2Bank.java")], check=True)

    def run(extra):
        return lambda: wall_and_cpu([java()] + extra + ["-cp", f"{H2_JAR}:{dest}", "H2Bank", str(transactions),
                                                        str(threads)])
    return run


def program_runs(classes, *program):
    """Runs of a Java program (main class and arguments) from `classes` under extra JVM options, as
    `javac_runs` gives them."""
    def run(extra):
        options, env = split_env(extra)
        return lambda: wall_and_cpu([java()] + options + ["-cp", str(classes)] + [str(a) for a in program], env)
    return run


def overhead(workloads, configs, runs):
    """Each workload (name → runs from `javac_runs`/`program_runs`) under every configuration (name → JVM
    options), interleaved `runs` times: workload → config → [(wall, cpu), …] for `print_paired_table`."""
    results = {}
    for workload, runner in workloads.items():
        log(f"overhead: {workload}")
        results[workload] = interleaved_samples({name: runner(extra) for name, extra in configs.items()}, runs)
    return results


def paired_ratio(base, other, resamples=4000, seed=1):
    """Median of the per-round ratios other[i] / base[i] (rounds run interleaved, so that drift in the
    machine's speed hits both alike) and a 95% bootstrap interval for it: (median, low, high)."""
    import random
    ratios = [o / b for b, o in zip(base, other)]
    rng = random.Random(seed)
    medians = sorted(statistics.median(rng.choice(ratios) for _ in ratios) for _ in range(resamples))
    return statistics.median(ratios), medians[int(0.025 * resamples)], medians[int(0.975 * resamples) - 1]


def interleaved_samples(configs, runs):
    """Runs the configurations interleaved (ABCABC…) `runs` times, so that drift in the machine's speed hits
    every config alike; returns every round: name → [(wall, cpu), …]."""
    got = {name: [] for name in configs}
    for i in range(runs):
        for name, run in configs.items():
            wall, cpu = run()
            got[name].append((wall, cpu))
            log(f"  run {i + 1}/{runs} {name}: {wall:.2f} s wall, {cpu:.2f} s CPU")
    return got


def print_paired_table(title, results, base="none"):
    """`results`: workload → config → [(wall, cpu), …] from interleaved_samples. One row per workload and
    measure: the baseline's median, then each config's paired ratio [95% interval]."""
    names = [n for n in next(iter(results.values())) if n != base]
    print(title)
    print(f"{'workload':<18} {'':<5} {base:>8} " + " ".join(f"{n:>26}" for n in names))
    for workload, runs in results.items():
        for k, measure in ((0, "wall"), (1, "CPU")):
            ref = [r[k] for r in runs[base]]
            cells = []
            for name in names:
                med, lo, hi = paired_ratio(ref, [r[k] for r in runs[name]])
                cells.append(f"{med:.3f} [{lo:.3f}, {hi:.3f}]")
            print(f"{workload:<18} {measure:<5} {statistics.median(ref):>7.2f}s " + " ".join(f"{c:>26}" for c in cells))


def fresh_dir(name):
    d = TARGET / name
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    return d
