"""What the JVMPI layer's load-time JVMTI capabilities cost a program that never asks for the events behind
them. The layer takes can_generate_method_entry/exit_events (JVMPI METHOD_ENTRY/EXIT), can_access_local_variables
(METHOD_ENTRY2's receiver), can_get_owned_monitor_info and can_get_current_contended_monitor (MONITOR_DUMP) at
load, because HotSpot grants them only in the OnLoad phase (jvmtiManageCapabilities.cpp: onload_capabilities)
and an agent loaded with -Xrun or enabling events later comes too late for them.

The agent is GcStats (java/native/jvmpi), which enables only GC, thread, compile and shutdown events, on
CpuBound (sorting, hashing, matrix loops). Configurations interleaved; ratios paired per round against no
agent. Extra layers to compare (e.g. builds with fewer capabilities) are given as NAME=PATH.

Usage: benches/jvmpi/caps.py [rounds] [NAME=/path/libjvmpi.so ...]   (default 8 rounds, the built layer)
"""
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from common import JDK17, ROOT, TARGET, build, compile_java, overhead, print_paired_table, program_runs  # noqa: E402

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 8
LAYERS = dict(a.split("=", 1) for a in sys.argv[2:]) or {"layer": str(ROOT / "target/release/libjvmpi.so")}
BOUND_ROUNDS = 150


def build_agent(name):
    """java/native/jvmpi/<name>.c as the JVMPI tests build it."""
    lib = TARGET / f"lib{name}.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-o", str(lib), f"-I{ROOT / 'include'}",
                    f"-I{JDK17 / 'include'}", f"-I{JDK17 / 'include/linux'}", str(ROOT / f"java/native/jvmpi/{name}.c"),
                    "-lpthread"], check=True)
    return lib


def main():
    build()
    classes = compile_java("java/bench/CpuBound.java")
    agent = build_agent("GcStats")
    configs = {"none": []}
    configs.update({name: [f"-agentpath:{path}={agent}"] for name, path in LAYERS.items()})
    results = overhead({f"CpuBound {BOUND_ROUNDS}": program_runs(classes, "CpuBound", BOUND_ROUNDS)}, configs, RUNS)
    print_paired_table(f"## JVMPI layer with GcStats ({RUNS} interleaved rounds, JDK 17; ratio = median of the rounds' "
                       "ratios to no agent [95% bootstrap interval])", results)


if __name__ == "__main__":
    main()
