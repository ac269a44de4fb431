import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * 200 virtual threads (JDK 21+, reached through reflection so that this compiles for release 17) each take
 * one lock and hold it 2 ms. From JDK 24 a virtual thread blocked on a monitor leaves its carrier and may
 * resume on another one. Prints the summed time the threads measured getting the lock.
 */
public class VirtualContention {
    static final class VirtualLock {}

    static final VirtualLock LOCK = new VirtualLock();
    static final AtomicLong waitedNanos = new AtomicLong();

    static void enter() {
        long before = System.nanoTime();
        synchronized (LOCK) {
            waitedNanos.addAndGet(System.nanoTime() - before);
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        ExecutorService executor =
                (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        for (int i = 0; i < 200; i++) executor.submit(VirtualContention::enter);
        executor.shutdown();
        if (!executor.awaitTermination(120, TimeUnit.SECONDS)) throw new IllegalStateException("stuck");
        System.out.println("expected_wait_ns=" + waitedNanos.get());
    }
}
