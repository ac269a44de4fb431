import java.util.ArrayList;
import java.util.List;

/**
 * Stress for the agent's per-thread state: 2,000 short-lived threads, up to 8 at a time, each allocating 100
 * Chunks and burning a little CPU while the samplers' clocks and allocation tracking come and go with them.
 */
public class ThreadChurn {
    static final class Chunk {
        long a, b;
    }

    static volatile Object sink;
    static volatile long spin;

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 2_000;
        List<Thread> running = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(() -> {
                for (int j = 0; j < 100; j++) {
                    sink = new Chunk();
                }
                long end = System.nanoTime() + 2_000_000;
                while (System.nanoTime() < end) {
                    spin++;
                }
            }, "churn-" + i);
            t.start();
            running.add(t);
            if (running.size() == 8) {
                for (Thread r : running) {
                    r.join();
                }
                running.clear();
            }
        }
        for (Thread r : running) {
            r.join();
        }
        System.out.println("threads=" + threads);
    }
}
