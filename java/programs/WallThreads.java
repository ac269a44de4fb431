/**
 * Many threads that mostly wait, the case wall-clock profiling is for: args[0] threads (default 1000), each
 * doing args[1] rounds (default 400) of a little work (a short hash loop) and a 5 ms sleep, with one spinning
 * thread beside them. Prints "rounds=<total>" at the end.
 */
public class WallThreads {
    static volatile long sink;
    static volatile boolean done;

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 400;
        Thread spinner = new Thread(() -> {
            long h = 7;
            while (!done) {
                h = h * 6364136223846793005L + 1442695040888963407L;
            }
            sink = h;
        }, "spinner");
        spinner.start();
        Thread[] all = new Thread[threads];
        long[] counts = new long[threads];
        for (int t = 0; t < threads; t++) {
            final int me = t;
            all[t] = new Thread(() -> {
                long h = me;
                for (int r = 0; r < rounds; r++) {
                    for (int i = 0; i < 2000; i++) {
                        h = h * 2862933555777941757L + 3037000493L;
                    }
                    try {
                        Thread.sleep(5);
                    } catch (InterruptedException e) {
                        return;
                    }
                    counts[me]++;
                }
                sink = h;
            }, "worker-" + t);
            all[t].start();
        }
        long total = 0;
        for (int t = 0; t < threads; t++) {
            all[t].join();
            total += counts[t];
        }
        done = true;
        spinner.join();
        System.out.println("rounds=" + total);
    }
}
