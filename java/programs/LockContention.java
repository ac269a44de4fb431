import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Known contention: T threads each take one shared lock R times and hold it H ms (default 4 x 100 x 5),
 * optionally from D nested calls down (arguments: T R H [D]).
 * Each thread also takes a lock of its own many times, which nobody else touches (no contention).
 * Prints what it measured itself: the summed time spent getting the shared lock, and how many
 * acquisitions certainly blocked.
 */
public class LockContention {
    static final class SharedLock {}
    static final class PrivateLock {}

    static final SharedLock SHARED = new SharedLock();
    static final AtomicLong waitedNanos = new AtomicLong();
    static final AtomicLong surelyContended = new AtomicLong();
    /** Set while a thread holds the shared lock, so that a thread can see it will have to block. */
    static volatile boolean sharedBusy;
    static long privateCounter;

    /**
     * Takes the shared lock, holds it, and returns how long getting it took. Counts the acquisition as
     * certainly contended when another thread held the lock just before and getting it took over 1 ms.
     */
    static long transfer(long holdMillis) throws InterruptedException {
        boolean busy = sharedBusy;
        long before = System.nanoTime();
        synchronized (SHARED) {
            long waited = System.nanoTime() - before;
            if (busy && waited > 1_000_000) surelyContended.incrementAndGet();
            sharedBusy = true;
            Thread.sleep(holdMillis);
            sharedBusy = false;
            return waited;
        }
    }

    static void privateWork(PrivateLock own) {
        for (int i = 0; i < 1000; i++) {
            synchronized (own) {
                privateCounter++;
            }
        }
    }

    interface Work {
        void run() throws InterruptedException;
    }

    /** Runs the work `levels` calls deep, for deep stacks. */
    static void descend(int levels, Work work) throws InterruptedException {
        if (levels > 0) descend(levels - 1, work);
        else work.run();
    }

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 100;
        long hold = args.length > 2 ? Long.parseLong(args[2]) : 5;
        int recursion = args.length > 3 ? Integer.parseInt(args[3]) : 0;
        CountDownLatch start = new CountDownLatch(1);
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            workers[t] = new Thread(() -> {
                PrivateLock own = new PrivateLock();
                try {
                    start.await();
                    descend(recursion, () -> {
                        for (int r = 0; r < rounds; r++) {
                            waitedNanos.addAndGet(transfer(hold));
                            privateWork(own);
                        }
                    });
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }, "contender-" + t);
            workers[t].start();
        }
        start.countDown();
        for (Thread w : workers) w.join();
        System.out.println("acquisitions=" + (long) threads * rounds);
        System.out.println("expected_wait_ns=" + waitedNanos.get());
        System.out.println("surely_contended=" + surelyContended.get());
    }
}
