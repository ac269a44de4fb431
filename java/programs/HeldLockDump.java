import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Holds a HeldLock while one thread ("blocked-taker") is blocked entering it and another ("notify-waiter")
 * waits on it to be notified; prints "ready" and keeps it so until a file named "release" appears in the
 * working directory (at most 120 s), so that a test can take a monitor dump in between.
 */
public class HeldLockDump {
    static final class HeldLock {}

    static boolean released;
    static int taken;

    static void takeLock(HeldLock lock) {
        synchronized (lock) {
            taken++;
        }
    }

    static void awaitRelease(HeldLock lock) throws InterruptedException {
        synchronized (lock) {
            while (!released) lock.wait();
        }
    }

    public static void main(String[] args) throws Exception {
        HeldLock lock = new HeldLock();
        Thread waiter = new Thread(() -> {
            try {
                awaitRelease(lock);
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }, "notify-waiter");
        waiter.start();
        while (waiter.getState() != Thread.State.WAITING) Thread.sleep(5);

        Thread taker = new Thread(() -> takeLock(lock), "blocked-taker");
        synchronized (lock) {
            taker.start();
            while (taker.getState() != Thread.State.BLOCKED) Thread.sleep(5);
            System.out.println("ready");
            System.out.flush();
            long deadline = System.nanoTime() + 120_000_000_000L;
            while (!Files.exists(Path.of("release")) && System.nanoTime() < deadline) Thread.sleep(20);
            released = true;
            lock.notifyAll();
        }
        taker.join();
        waiter.join();
        System.out.println("released");
    }
}
