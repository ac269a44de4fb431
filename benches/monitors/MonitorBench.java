import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

/**
 * Contended synchronized blocks, two ways:
 *   short T N [W]  T threads each enter one lock N times and do W steps of arithmetic inside (default 50,
 *                  a few hundred ns): many contended entries per second, so observing each one costs.
 *   hold  T R H    T threads each hold one lock R times for H microseconds, sleeping: every entry but the
 *                  barging ones blocks, so the number of contended entries is steady.
 * Prints work_ms (the contended phase only) and waited_ms (the time the threads measured getting the lock).
 */
public class MonitorBench {
    static final Object LOCK = new Object();
    static long counter;
    static long sink;

    static int work = 50;

    static long shortSection(int iterations) {
        long waited = 0;
        for (int i = 0; i < iterations; i++) {
            long before = System.nanoTime();
            synchronized (LOCK) {
                waited += System.nanoTime() - before;
                long x = counter;
                for (int k = 0; k < work; k++) x = x * 31 + k;
                counter = x;
            }
        }
        return waited;
    }

    static long holdSection(int rounds, long holdMicros) {
        long waited = 0;
        for (int r = 0; r < rounds; r++) {
            long before = System.nanoTime();
            synchronized (LOCK) {
                waited += System.nanoTime() - before;
                long until = System.nanoTime() + holdMicros * 1000;
                // Sleep while holding the lock, so that the others block instead of spinning.
                for (long left; (left = until - System.nanoTime()) > 0; ) LockSupport.parkNanos(left);
            }
        }
        return waited;
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        int threads = Integer.parseInt(args[1]);
        int n = Integer.parseInt(args[2]);
        long hold = args.length > 3 ? Long.parseLong(args[3]) : 0;
        if (mode.equals("short") && args.length > 3) work = (int) hold;
        if (mode.equals("short")) shortSection(n / 10); // warm up the JIT before the clock starts
        CountDownLatch start = new CountDownLatch(1);
        long[] waited = new long[threads];
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int me = t;
            workers[t] = new Thread(() -> {
                try {
                    start.await();
                    waited[me] = mode.equals("short") ? shortSection(n) : holdSection(n, hold);
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }, "bench-" + t);
            workers[t].start();
        }
        long begin = System.nanoTime();
        start.countDown();
        for (Thread w : workers) w.join();
        long work = System.nanoTime() - begin;
        long total = 0;
        for (long w : waited) total += w;
        System.out.println("work_ms=" + work / 1_000_000);
        System.out.println("waited_ms=" + total / 1_000_000);
    }
}
