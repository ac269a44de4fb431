/**
 * Many garbage collections while a second thread stays blocked: main keeps about 16 MB alive and asks for a
 * full collection again and again (each one stops the world for a millisecond or more), computing for 4 ms
 * between two, while "flat-waiter" waits on a monitor for the whole run. Prints `gcs=<count>`.
 * Args: seconds to run (default 2).
 */
public class FlatGcBlocked {
    static final Object LOCK = new Object();
    static volatile Object sink;

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 2;
        Thread waiter = new Thread(() -> {
            synchronized (LOCK) {
                try {
                    LOCK.wait();
                } catch (InterruptedException e) {
                    // the run is over
                }
            }
        }, "flat-waiter");
        waiter.setDaemon(true);
        waiter.start();
        byte[][] live = new byte[256][];
        for (int i = 0; i < live.length; i++) {
            live[i] = new byte[64 * 1024];
        }
        long end = System.nanoTime() + (long) (seconds * 1e9);
        int gcs = 0;
        while (System.nanoTime() < end) {
            System.gc();
            gcs++;
            long busyUntil = System.nanoTime() + 4_000_000;
            long h = gcs;
            while (System.nanoTime() < busyUntil) {
                h = h * 6364136223846793005L + 1442695040888963407L;
            }
            sink = h;
        }
        sink = live;
        System.out.println("gcs=" + gcs);
    }
}
