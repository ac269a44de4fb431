import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadFactory;

/**
 * Threads whose time goes to native code, for the cstack tests: "c-spinner" spins in a C function
 * (java/native/NativeStacks.c, spin_in_c) through a Java native method; "c-callback" calls a C function
 * (call_back_from_c) through the native method callIntoC, which calls back the Java method javaCallback,
 * which spins; "pipe-reader" reads a pipe that `cat /dev/zero` fills, so its time is in libc's read under
 * FileInputStream; "allocator" keeps the GC busy with objects that survive a young collection.
 * Then, on JDK 21+ (reached through reflection, so that this compiles for release 17), args[2] virtual
 * threads (default 200) named vt-cpu-0 … computing in virtualWork, args[3] rounds each (default 800),
 * yielding between rounds so that they take turns on the carriers; prints "virtual threads=N" when they
 * ran. Arguments: the JNI library's path, seconds, [virtual threads, their rounds].
 */
public class NativeStacks {
    static native long spinInC(double seconds);

    static native long callIntoC(double seconds);

    static volatile long sink;

    public static void main(String[] args) throws Exception {
        System.load(args[0]);
        double seconds = Double.parseDouble(args[1]);
        long end = System.nanoTime() + (long) (seconds * 1e9);
        Thread spinner = new Thread(() -> sink += spinInC(seconds), "c-spinner");
        Thread callback = new Thread(() -> sink += callIntoC(seconds), "c-callback");
        Process cat = new ProcessBuilder("cat", "/dev/zero").start();
        Thread reader = new Thread(() -> readPipe(cat.getInputStream(), end), "pipe-reader");
        Thread allocator = new Thread(() -> allocate(end), "allocator");
        spinner.start();
        callback.start();
        reader.start();
        allocator.start();
        spinner.join();
        callback.join();
        reader.join();
        allocator.join();
        cat.destroy();
        int virtualThreads = args.length > 2 ? Integer.parseInt(args[2]) : 200;
        int virtualRounds = args.length > 3 ? Integer.parseInt(args[3]) : 800;
        if (Runtime.version().feature() >= 21 && virtualThreads > 0) {
            virtualPhase(virtualThreads, virtualRounds);
            System.out.println("virtual threads=" + virtualThreads);
        }
        System.out.println("done " + sink);
    }

    /** Called back from C (call_back_from_c) under callIntoC: spins in Java. */
    static long javaCallback(double seconds) {
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long h = 7;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 10000; i++) {
                h = h * 6364136223846793005L + 1442695040888963407L;
            }
        }
        return h;
    }

    static void virtualWork(int rounds) {
        long h = 11;
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < 20000; i++) {
                h = h * 2862933555777941757L + 3037000493L;
            }
            Thread.yield();
        }
        sink += h;
    }

    static void virtualPhase(int count, int rounds) throws Exception {
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        Class<?> ofVirtual = Class.forName("java.lang.Thread$Builder$OfVirtual");
        Thread[] all = new Thread[count];
        for (int i = 0; i < count; i++) {
            Object named = ofVirtual.getMethod("name", String.class).invoke(builder, "vt-cpu-" + i);
            ThreadFactory factory = (ThreadFactory) ofVirtual.getMethod("factory").invoke(named);
            all[i] = factory.newThread(() -> virtualWork(rounds));
            all[i].start();
        }
        for (Thread t : all) t.join();
    }

    static void readPipe(InputStream in, long end) {
        byte[] buffer = new byte[1 << 16];
        long total = 0;
        try {
            while (System.nanoTime() < end) {
                int n = in.read(buffer);
                if (n < 0) break;
                total += n;
            }
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
        sink += total;
    }

    static void allocate(long end) {
        List<Object[]> survivors = new ArrayList<>();
        while (System.nanoTime() < end) {
            Object[] chunk = new Object[64];
            for (int i = 0; i < chunk.length; i++) chunk[i] = new long[16];
            survivors.add(chunk);
            // Keep about 20 MB alive across collections, so that each young collection copies.
            if (survivors.size() > 2000) survivors.subList(0, 1000).clear();
        }
        sink += survivors.size();
    }
}
