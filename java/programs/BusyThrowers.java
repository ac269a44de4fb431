import java.util.ArrayList;
import java.util.List;

/**
 * Four threads throwing and catching exceptions and allocating, for the given seconds (default 6), then
 * main returns: a program to send signals to while it runs and exits (the exit races a SIGQUIT dump).
 * Prints "ready" once the threads run.
 */
public class BusyThrowers {
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 6;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            Thread th = new Thread(() -> {
                List<Object> keep = new ArrayList<>();
                while (System.nanoTime() < end) {
                    try {
                        throwSome(keep.size());
                    } catch (IllegalStateException e) {
                        keep.add(e.getMessage());
                        if (keep.size() > 10_000) {
                            keep.clear();
                        }
                    }
                }
                sink += keep.size();
            }, "thrower-" + t);
            th.start();
            threads.add(th);
        }
        System.out.println("ready");
        for (Thread th : threads) {
            th.join();
        }
        System.out.println("done " + sink);
    }

    static void throwSome(int n) {
        throw new IllegalStateException("busy " + n);
    }
}
