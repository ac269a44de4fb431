import java.util.ArrayList;
import java.util.List;

/**
 * The stress matrix's program (benches/stress): four threads that throw and catch exceptions, allocate and
 * contend for one lock, for the given seconds. Prints "ready" once they run. Args: seconds, then how it ends:
 *   return       main returns once the threads are done (the default);
 *   exit-thread  another thread calls System.exit(0) while the workers still run;
 *   oom          main fills the heap (kept in a static) until the OutOfMemoryError escapes it.
 */
public class StressWorkload {
    static volatile long sink;
    static final Object LOCK = new Object();
    static final List<long[]> HOARD = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        String end = args.length > 1 ? args[1] : "return";
        long until = System.nanoTime() + (long) (seconds * 1e9);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            Thread w = new Thread(() -> work(until), "worker-" + t);
            w.setDaemon(end.equals("exit-thread"));
            w.start();
            workers.add(w);
        }
        System.out.println("ready");
        switch (end) {
            case "exit-thread": {
                Thread exiter = new Thread(() -> {
                    try {
                        Thread.sleep((long) (seconds * 1000));
                    } catch (InterruptedException e) {
                        return;
                    }
                    System.exit(0);
                }, "exiter");
                exiter.start();
                // Main waits for ever: only the other thread's System.exit ends the program.
                Thread.sleep(Long.MAX_VALUE);
                break;
            }
            case "oom":
                while (true) {
                    HOARD.add(new long[4]);
                }
            default:
                for (Thread w : workers) {
                    w.join();
                }
        }
    }

    static void work(long until) {
        List<Object> keep = new ArrayList<>();
        while (System.nanoTime() < until) {
            try {
                fail(keep.size());
            } catch (IllegalStateException e) {
                keep.add(e.getMessage());
                if (keep.size() > 5_000) {
                    keep.clear();
                }
            }
            synchronized (LOCK) {
                sink += keep.size();
            }
        }
    }

    static void fail(int n) {
        throw new IllegalStateException("stress " + n);
    }
}
