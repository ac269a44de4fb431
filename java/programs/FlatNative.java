import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * CPU time in a JNI method (java/native/FlatNative.c) against Java work of its own, each timed with the
 * thread's own CPU clock, so that a test can compare a profiler's native ticks with the program's split:
 *   own-share native=<percent> java=<percent> cpu-ms=<total>
 * Args: the library's path, seconds to run (default 3).
 */
public class FlatNative {
    static volatile long sink;

    /** Spins in C for `iterations` rounds of a random-number generator. */
    static native long spin(long seed, long iterations);

    static long javaWork(long seed) {
        long h = seed;
        for (int i = 0; i < 2_000_000; i++) {
            h = h * 6364136223846793005L + 1442695040888963407L;
            h ^= (h >>> 29);
        }
        return h;
    }

    public static void main(String[] args) {
        System.load(args[0]);
        double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 3;
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long nativeNs = 0, javaNs = 0;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long seed = 1;
        while (System.nanoTime() < end) {
            long t0 = mx.getCurrentThreadCpuTime();
            seed = spin(seed, 6_000_000);
            long t1 = mx.getCurrentThreadCpuTime();
            seed = javaWork(seed);
            long t2 = mx.getCurrentThreadCpuTime();
            nativeNs += t1 - t0;
            javaNs += t2 - t1;
        }
        sink = seed;
        double total = nativeNs + javaNs;
        System.out.printf("own-share native=%.2f java=%.2f cpu-ms=%d%n",
            100 * nativeNs / total, 100 * javaNs / total, (long) (total / 1e6));
    }
}
