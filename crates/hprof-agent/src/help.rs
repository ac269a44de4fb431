//! `hprof=help`: the usage table.

pub const HELP: &str = "\
     HPROF: Heap and CPU Profiling Agent (hprof-rs, on JVMTI for JDK 17+)

hprof usage: java -agentlib:hprof=[help]|[<option>=<value>, ...]

Option Name and Value  Description                      Default
---------------------  -----------                      -------
heap=dump|sites|all    heap profiling                   all
cpu=samples|times|old  CPU usage                        off
cpu=wall               wall clock: every thread, any state off
cpu=flat               -Xprof's flat profile (or -Xprof) off
monitor=y|n            monitor contention               n
format=a|b             text(txt) or binary output       a
file=<file>            write data to file               java.hprof[{.txt}]
net=<host>:<port>      send data over a socket          off
depth=<size>           stack trace depth                4
interval=<ms>          sample interval in ms            10 (cpu=wall: 50)
cutoff=<value>         output cutoff point              0.0001
lineno=y|n             line number in traces?           y
thread=y|n             thread in traces?                n
doe=y|n                dump on exit?                    y
msa=y|n                Solaris micro state accounting   n
force=y|n              force output to <file>           y
verbose=y|n            print messages about dumps       y

Beyond HPROF
------------
sampler=async|safepoint  how cpu=samples samples:          async
                         async = CPU-time timers and AsyncGetCallTrace (only running threads,
                         no safepoint bias); safepoint = HPROF's way (all RUNNABLE threads)
clock=perf|posix         the CPU-time clock that paces sampler=async:                     perf
                         perf = a timer per thread (exact shares); posix = POSIX CPU timers,
                         checked on scheduler ticks: cheaper where interrupts are dear (VMs),
                         skewed when threads compete for CPUs (also the fallback for perf)
collapsed=<file>         full-depth stacks in folded format (flamegraph.pl, speedscope)   off
flamegraph=<file>        interactive flame graph, .html or .svg                           off
cstack=y|n               native frames (JNI, libc, the JVM's GC and compiler) on top of    auto
                         Java frames, and the JVM's own threads; auto = in flamegraph=,
                         collapsed=, otlp= and pyroscope=, not in TRACEs; y = in TRACEs too
alloc_interval=<bytes>   heap=sites samples allocations every ~<bytes> (e.g. 512k)        off
                         and reports estimates; off = every allocation counted exactly
alloc_probe=y|n          heap=sites counts by probes in the bytecode (cheaper) instead     n
                         of the JVM's allocation event
threads=<glob>           cpu=samples/wall: sample only threads whose name matches         all
                         (* any run, ? one character), e.g. threads=worker-*
include=<pat;pat>        keep only stacks with a frame (Class.method) matching a pattern   all
exclude=<pat;pat>        drop stacks with a frame matching a pattern, e.g. *.sleep0       none
duration=<seconds>       end the session after this long: reports written, sampling       off
                         stopped, the program runs on (hprof attach PID …,duration=30)

Continuous profiles (with cpu=samples; see docs/continuous.md)
--------------------------------------------------------------
otlp=<url>|env           upload each window as OTLP profiles (POST <url>/v1development/      off
                         profiles); env = OTEL_EXPORTER_OTLP_ENDPOINT
pyroscope=<url>          upload each window as gzipped pprof to Pyroscope (<url>/ingest)  off
service=<name>           service.name / the Pyroscope application  OTEL_SERVICE_NAME or java
labels=<k:v;k:v>         labels on every window (resource attributes; Pyroscope tags)     none
upload_interval=<time>   window length, e.g. 10s (at least 1s)                            10s
otlp_headers=<k:v;k:v>   HTTP headers for otlp= (auth), beside OTEL_EXPORTER_OTLP_HEADERS none
flush_timeout=<time>     at exit, how long the last window may take to upload             5s

Obsolete Options
----------------
gc_okay=y|n            accepted and ignored

Examples
--------
  - Get sample cpu information every 20 millisec, with a stack depth of 3:
      java -agentlib:hprof=cpu=samples,interval=20,depth=3 classname
  - Get heap usage information based on the allocation sites:
      java -agentlib:hprof=heap=sites classname
  - CPU samples with a flame graph of the full stacks:
      java -agentlib:hprof=cpu=samples,flamegraph=cpu.html classname
  - CPU profiles to an OpenTelemetry Collector every 10 s:
      java -agentlib:hprof=cpu=samples,otlp=http://collector:4318,service=checkout classname
  - A binary heap dump for the front end (hprof summary/histo/dominators java.hprof):
      java -agentlib:hprof=heap=dump,format=b classname

Notes
-----
  - With format=b, monitor=y's lock times go into a MONITOR TIMES record of hprof-rs's
    (hprof flame --lock java.hprof); MONITOR DUMP and the WAIT/WAITED/SLEEP lines are text only.
  - The option format=b cannot be used with cpu=old|times.
  - cpu=times and cpu=old insert probes into every method's bytecode: exact call counts, and each
    method's own thread CPU time; programs run several times slower.
  - The -Xrunhprof interface can still be used, e.g.
      java -Xrunhprof:[help]|[<option>=<value>, ...]
    will behave exactly the same as:
      java -agentlib:hprof=[help]|[<option>=<value>, ...]
  - -agentlib:hprof and -Xrunhprof find libhprof.so in the JDK's lib directory or on
    LD_LIBRARY_PATH; -agentpath:/path/to/libhprof.so=<options> needs neither.
  - Ctrl-\\ (SIGQUIT) writes the profile so far and the program goes on.
";
