/**
 * Exact calls, then an abrupt end: `exit` calls System.exit(0) from another thread while main is still
 * inside a call; `term` prints "ready" and waits for the test's SIGTERM. Prints
 *   expected-calls TimedExit.counted=<n> TimedExit.worker=<n>
 * first, so that the test knows what the report must say. Args: exit|term.
 */
public class TimedExit {
    static long sink;

    static void counted(int i) {
        sink += i;
    }

    static void worker(int i) {
        sink ^= i;
    }

    static void waitForever() throws InterruptedException {
        Thread.sleep(Long.MAX_VALUE);
    }

    public static void main(String[] args) throws Exception {
        int n = 250_000, w = 40_000;
        Thread t = new Thread(() -> {
            for (int i = 0; i < w; i++) {
                worker(i);
            }
        }, "worker");
        t.start();
        for (int i = 0; i < n; i++) {
            counted(i);
        }
        t.join();
        System.out.println("expected-calls TimedExit.counted=" + n + " TimedExit.worker=" + w);
        if (args[0].equals("exit")) {
            new Thread(() -> System.exit(0), "exiter").start();
        } else {
            System.out.println("ready");
        }
        System.out.flush();
        waitForever();
    }
}
