import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Threads whose time goes to native code, for the cstack tests: "c-spinner" spins in a C function
 * (java/native/NativeStacks.c, spin_in_c) through a Java native method; "pipe-reader" reads a pipe that
 * `cat /dev/zero` fills, so its time is in libc's read under FileInputStream; "allocator" keeps the GC busy
 * with objects that survive a young collection. Arguments: the JNI library's path, seconds.
 */
public class NativeStacks {
    static native long spinInC(double seconds);

    static volatile long sink;

    public static void main(String[] args) throws Exception {
        System.load(args[0]);
        double seconds = Double.parseDouble(args[1]);
        long end = System.nanoTime() + (long) (seconds * 1e9);
        Thread spinner = new Thread(() -> sink += spinInC(seconds), "c-spinner");
        Process cat = new ProcessBuilder("cat", "/dev/zero").start();
        Thread reader = new Thread(() -> readPipe(cat.getInputStream(), end), "pipe-reader");
        Thread allocator = new Thread(() -> allocate(end), "allocator");
        spinner.start();
        reader.start();
        allocator.start();
        spinner.join();
        reader.join();
        allocator.join();
        cat.destroy();
        System.out.println("done " + sink);
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
