import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A lock profile with known numbers (arguments: T R H W M, default 4 40 5 8 100): T threads "poster-i" each
 * take one shared Ledger lock R times in post() and hold it H ms; meanwhile the thread "mail-waiter" calls
 * Object.wait(M) on a Mailbox W times in awaitMail() and nobody notifies it. Prints what it measured on its
 * own clocks: the summed time getting the Ledger, the entries that certainly blocked, the waits and their
 * summed time.
 */
public class LockProfile {
    static final class Ledger {}
    static final class Mailbox {}

    static final Ledger LEDGER = new Ledger();
    static final AtomicLong blockedNanos = new AtomicLong();
    static final AtomicLong surelyBlocked = new AtomicLong();
    static volatile boolean ledgerBusy;

    /** Takes the Ledger and holds it; returns how long getting it took. */
    static long post(long holdMillis) throws InterruptedException {
        boolean busy = ledgerBusy;
        long before = System.nanoTime();
        synchronized (LEDGER) {
            long waited = System.nanoTime() - before;
            if (busy && waited > 1_000_000) surelyBlocked.incrementAndGet();
            ledgerBusy = true;
            Thread.sleep(holdMillis);
            ledgerBusy = false;
            return waited;
        }
    }

    /** Waits on the mailbox `times` times for `millis` each; returns the time spent in Object.wait. */
    static long awaitMail(Mailbox mailbox, int times, long millis) throws InterruptedException {
        long total = 0;
        synchronized (mailbox) {
            for (int i = 0; i < times; i++) {
                long before = System.nanoTime();
                mailbox.wait(millis);
                total += System.nanoTime() - before;
            }
        }
        return total;
    }

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 40;
        long hold = args.length > 2 ? Long.parseLong(args[2]) : 5;
        int waits = args.length > 3 ? Integer.parseInt(args[3]) : 8;
        long waitMillis = args.length > 4 ? Long.parseLong(args[4]) : 100;
        CountDownLatch start = new CountDownLatch(1);
        AtomicLong waitedNanos = new AtomicLong();
        Thread waiter = new Thread(() -> {
            try {
                waitedNanos.set(awaitMail(new Mailbox(), waits, waitMillis));
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }, "mail-waiter");
        Thread[] posters = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            posters[t] = new Thread(() -> {
                try {
                    start.await();
                    for (int r = 0; r < rounds; r++) blockedNanos.addAndGet(post(hold));
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }, "poster-" + t);
            posters[t].start();
        }
        waiter.start();
        start.countDown();
        for (Thread p : posters) p.join();
        waiter.join();
        System.out.println("acquisitions=" + (long) threads * rounds);
        System.out.println("blocked_ns=" + blockedNanos.get());
        System.out.println("surely_blocked=" + surelyBlocked.get());
        System.out.println("waits=" + waits);
        System.out.println("waited_ns=" + waitedNanos.get());
    }
}
