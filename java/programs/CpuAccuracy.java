import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.ServerSocket;

/**
 * Two hot methods alternating on one thread, each timed with the thread's own CPU clock, plus an idle
 * thread blocked in ServerSocket.accept(). Prints the program's own shares so that a test can compare a
 * profiler's samples against them:
 *   own-share hotAlpha=<percent> hotBeta=<percent> cpu-ms=<total>
 * Args: seconds to run (default 3).
 */
public class CpuAccuracy {
    static volatile long sink;

    /** Alpha does three units of work per call, Beta one: Alpha should get ~75% of the CPU. */
    static long hotAlpha(long seed) {
        long h = seed;
        for (int i = 0; i < 3_000_000; i++) {
            h = h * 6364136223846793005L + 1442695040888963407L;
            h ^= (h >>> 29);
        }
        return h;
    }

    static long hotBeta(long seed) {
        long h = seed;
        for (int i = 0; i < 1_000_000; i++) {
            h = h * 2862933555777941757L + 3037000493L;
            h ^= (h >>> 31);
        }
        return h;
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        ServerSocket server = new ServerSocket(0);
        Thread idle = new Thread(() -> {
            try {
                server.accept();
            } catch (Exception e) {
                // closed at the end
            }
        }, "idle-acceptor");
        idle.setDaemon(true);
        idle.start();

        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long alphaNs = 0, betaNs = 0;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long seed = 1;
        while (System.nanoTime() < end) {
            long t0 = mx.getCurrentThreadCpuTime();
            seed = hotAlpha(seed);
            long t1 = mx.getCurrentThreadCpuTime();
            seed = hotBeta(seed);
            long t2 = mx.getCurrentThreadCpuTime();
            alphaNs += t1 - t0;
            betaNs += t2 - t1;
        }
        sink = seed;
        server.close();
        double total = alphaNs + betaNs;
        System.out.printf("own-share hotAlpha=%.2f hotBeta=%.2f cpu-ms=%d%n",
            100 * alphaNs / total, 100 * betaNs / total, (long) (total / 1e6));
    }
}
