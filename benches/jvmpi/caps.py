"""What the JVMPI layer's load-time JVMTI capabilities cost a program that never asks for the events behind
them. The layer takes can_generate_method_entry/exit_events (JVMPI METHOD_ENTRY/EXIT), can_access_local_variables
(METHOD_ENTRY2's receiver), can_get_owned_monitor_info and can_get_current_contended_monitor (MONITOR_DUMP) at
load, because HotSpot grants them only in the OnLoad phase (jvmtiManageCapabilities.cpp: onload_capabilities)
and an agent loaded with -Xrun or enabling events later comes too late for them.

The agent is GcStats (java/native/jvmpi), which enables only GC, thread, compile and shutdown events, on
CpuBound (sorting, hashing, matrix loops). Configurations interleaved; ratios paired per round against no
agent. Variants are given as NAME=/path/libjvmpi.so (another build) or NAME=OPTIONS (the built layer with
those layer options in front of the agent, e.g. locals=y).

Usage: benches/jvmpi/caps.py [rounds] [NAME=/path/libjvmpi.so | NAME=layer-options ...]
       (default 8 rounds; the built layer as it loads GcStats (locals=auto) and with locals=y)
"""
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from common import JDK17, ROOT, TARGET, build, compile_java, overhead, print_paired_table, program_runs  # noqa: E402

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 8
BUILT = str(ROOT / "target/release/libjvmpi.so")
LAYERS = dict(a.split("=", 1) for a in sys.argv[2:]) or {"auto": "", "locals=y": "locals=y"}
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
    for name, spec in LAYERS.items():
        if spec.startswith("/"):
            configs[name] = [f"-agentpath:{spec}={agent}"]
        else:
            configs[name] = [f"-agentpath:{BUILT}={spec + ',' if spec else ''}{agent}"]
    results = overhead({f"CpuBound {BOUND_ROUNDS}": program_runs(classes, "CpuBound", BOUND_ROUNDS)}, configs, RUNS)
    print_paired_table(f"## JVMPI layer with GcStats ({RUNS} interleaved rounds, JDK 17; ratio = median of the rounds' "
                       "ratios to no agent [95% bootstrap interval])", results)


if __name__ == "__main__":
    main()
