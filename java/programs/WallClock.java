import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadFactory;

/**
 * Threads whose wall-clock behaviour is known, timed by their own clocks (System.nanoTime), for cpu=wall.
 *
 * Phase "platform" (args[0] seconds, default 6):
 *   sleeper  sleeps 500 ms, then spins 500 ms, again and again
 *   holder   holds a lock for 200 ms (sleeping inside it), then sleeps 400 ms outside it
 *   blocker  takes the same lock (blocked while the holder has it), then sleeps 5 ms
 *   reader   reads a pipe that the writer writes one byte into every 100 ms
 *   spinner  spins
 * then prints
 *   own sleeper-sleeping=<percent> blocker-blocked=<percent> reader-reading=<percent>
 * Phase "virtual" (args[1] seconds, default 2; JDK 21+ only, reached through reflection so that this
 * compiles for release 17): 1,000 virtual threads vt-0 … vt-999 sleeping 20 ms at a time in
 * virtualNap, and two, vt-spin-0 and vt-spin-1, spinning in virtualSpin (mounted on a carrier).
 * Each phase's start (once its threads run) and end, in ms since the JVM started, are printed as
 *   phase <name> start-ms=<ms> end-ms=<ms>
 */
public class WallClock {
    static volatile boolean stop;
    static volatile long sink;
    static final Object LOCK = new Object();

    static long sinceJvmStart() {
        return System.currentTimeMillis() - ManagementFactory.getRuntimeMXBean().getStartTime();
    }

    static void spinFor(long nanos) {
        long end = System.nanoTime() + nanos;
        long h = 1;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 1000; i++) {
                h = h * 6364136223846793005L + 1442695040888963407L;
            }
        }
        sink = h;
    }

    static void sleeperLoop(long[] out) throws InterruptedException {
        long start = System.nanoTime(), slept = 0;
        while (!stop) {
            long t0 = System.nanoTime();
            Thread.sleep(500);
            slept += System.nanoTime() - t0;
            if (stop) break;
            spinFor(500_000_000L);
        }
        out[0] = slept;
        out[1] = System.nanoTime() - start;
    }

    static void holderLoop() throws InterruptedException {
        while (!stop) {
            synchronized (LOCK) {
                Thread.sleep(200);
            }
            Thread.sleep(400);
        }
    }

    static void blockerLoop(long[] out) throws InterruptedException {
        long start = System.nanoTime(), blocked = 0;
        while (!stop) {
            long t0 = System.nanoTime();
            synchronized (LOCK) {
                blocked += System.nanoTime() - t0;
            }
            Thread.sleep(5);
        }
        out[0] = blocked;
        out[1] = System.nanoTime() - start;
    }

    static void readerLoop(Pipe.SourceChannel source, long[] out) throws Exception {
        ByteBuffer one = ByteBuffer.allocate(1);
        long start = System.nanoTime(), reading = 0;
        while (!stop) {
            one.clear();
            long t0 = System.nanoTime();
            if (source.read(one) < 0) break;
            reading += System.nanoTime() - t0;
        }
        out[0] = reading;
        out[1] = System.nanoTime() - start;
    }

    static void spinnerLoop() {
        while (!stop) {
            spinFor(10_000_000L);
        }
    }

    interface Body {
        void run() throws Exception;
    }

    static Thread start(String name, Body body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, name);
        t.start();
        return t;
    }

    static void platformPhase(double seconds) throws Exception {
        Pipe pipe = Pipe.open();
        long[] sleeper = new long[2], blocker = new long[2], reader = new long[2];
        List<Thread> threads = new ArrayList<>();
        threads.add(start("sleeper", () -> sleeperLoop(sleeper)));
        threads.add(start("holder", WallClock::holderLoop));
        threads.add(start("blocker", () -> blockerLoop(blocker)));
        threads.add(start("reader", () -> readerLoop(pipe.source(), reader)));
        threads.add(start("spinner", WallClock::spinnerLoop));
        Thread writer = start("writer", () -> {
            ByteBuffer one = ByteBuffer.allocate(1);
            while (!stop) {
                Thread.sleep(100);
                one.clear();
                pipe.sink().write(one);
            }
            one.clear();
            pipe.sink().write(one);
        });
        long startMs = sinceJvmStart();
        Thread.sleep((long) (seconds * 1000));
        stop = true;
        for (Thread t : threads) t.join();
        writer.join();
        long endMs = sinceJvmStart();
        System.out.printf("own sleeper-sleeping=%.2f blocker-blocked=%.2f reader-reading=%.2f%n",
            100.0 * sleeper[0] / sleeper[1], 100.0 * blocker[0] / blocker[1], 100.0 * reader[0] / reader[1]);
        System.out.printf("phase platform start-ms=%d end-ms=%d%n", startMs, endMs);
    }

    static void virtualNap() {
        while (!stop) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    static void virtualSpin() {
        while (!stop) {
            spinFor(10_000_000L);
        }
    }

    static void virtualPhase(double seconds) throws Exception {
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        Class<?> ofVirtual = Class.forName("java.lang.Thread$Builder$OfVirtual");
        stop = false;
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 1002; i++) {
            String name = i < 1000 ? "vt-" + i : "vt-spin-" + (i - 1000);
            Object named = ofVirtual.getMethod("name", String.class).invoke(builder, name);
            ThreadFactory factory = (ThreadFactory) ofVirtual.getMethod("factory").invoke(named);
            Thread t = factory.newThread(i < 1000 ? WallClock::virtualNap : WallClock::virtualSpin);
            t.start();
            threads.add(t);
        }
        long startMs = sinceJvmStart();
        Thread.sleep((long) (seconds * 1000));
        stop = true;
        for (Thread t : threads) t.join();
        long endMs = sinceJvmStart();
        System.out.printf("phase virtual start-ms=%d end-ms=%d%n", startMs, endMs);
    }

    public static void main(String[] args) throws Exception {
        platformPhase(args.length > 0 ? Double.parseDouble(args[0]) : 6);
        if (Runtime.version().feature() >= 21) {
            virtualPhase(args.length > 1 ? Double.parseDouble(args[1]) : 2);
        }
    }
}
