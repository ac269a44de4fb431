/**
 * The continuous-profiles test program for allocation and lock windows: for S seconds (argument, default
 * 6), two threads take turns on one lock, each holding it 2 ms at a time (so the other blocks on it), and
 * between turns allocate 100 Chunks of a 1 KiB byte[] each into a ring of 1,000 (so that about 1,000 stay
 * live). Prints how many Chunks it made and how many turns it took.
 */
public class ContinuousMix {
    static final class Chunk {
        final byte[] data = new byte[1024];
    }

    static final Object LOCK = new Object();
    static final Chunk[] RING = new Chunk[1000];

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 6;
        long until = System.nanoTime() + (long) (seconds * 1e9);
        long[][] counts = new long[2][2];
        Thread[] threads = new Thread[2];
        for (int t = 0; t < 2; t++) {
            long[] mine = counts[t];
            threads[t] = new Thread(() -> work(until, mine), "mix-" + t);
            threads[t].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        System.out.println("chunks=" + (counts[0][0] + counts[1][0]) + " turns=" + (counts[0][1] + counts[1][1]));
    }

    /** counts[0]: Chunks made, counts[1]: turns taken. */
    static void work(long until, long[] counts) {
        int next = 0;
        while (System.nanoTime() < until) {
            synchronized (LOCK) {
                hold();
            }
            counts[1]++;
            for (int k = 0; k < 100; k++) {
                RING[next] = allocate();
                next = (next + 1) % RING.length;
            }
            counts[0] += 100;
        }
    }

    static Chunk allocate() {
        return new Chunk();
    }

    static void hold() {
        try {
            Thread.sleep(2);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
