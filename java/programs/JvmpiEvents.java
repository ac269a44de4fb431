/**
 * The JVMPI event probe's program, with known behaviour per event:
 * <ul>
 * <li>{@code Target.touch()} is called 100 times on one object and {@code Target.stat()} 100 times: 100
 * METHOD_ENTRY2s with the same receiver, 100 with none, 100 METHOD_EXITs each;</li>
 * <li>thread "holder" holds {@code LOCK} while thread "contender" tries to enter it: one contended
 * enter/entered pair on "contender";</li>
 * <li>main waits 50 ms on {@code WAITED}: one MONITOR_WAIT with timeout 50, one MONITOR_WAITED of at least
 * 40 ms;</li>
 * <li>10,000 {@code Garbage} objects become unreachable before three System.gc() calls;</li>
 * <li>{@code JvmpiUnloadPayload} is loaded by a class loader of its own, which is dropped before those
 * collections, so the class is unloaded.</li>
 * </ul>
 */
public class JvmpiEvents {
    static final class Target {
        int touched;

        void touch() {
            touched++;
        }

        static int stat(int x) {
            return x + 1;
        }
    }

    static final class Garbage {
        long payload;
    }

    static final Object LOCK = new Object();
    static final Object WAITED = new Object();
    static volatile Object sink;

    static void loadAndDrop() throws Exception {
        java.net.URL classes = JvmpiEvents.class.getProtectionDomain().getCodeSource().getLocation();
        try (java.net.URLClassLoader loader = new java.net.URLClassLoader(new java.net.URL[] {classes}, null)) {
            Class<?> c = Class.forName("JvmpiUnloadPayload", true, loader);
            sink = c.getDeclaredConstructor().newInstance();
        }
        sink = null;
    }

    static void pause(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public static void main(String[] args) throws Exception {
        Target t = new Target();
        int s = 0;
        for (int i = 0; i < 100; i++) {
            t.touch();
            s = Target.stat(s);
        }
        Thread[] contender = new Thread[1];
        Thread holder = new Thread(() -> {
            synchronized (LOCK) {
                // Hold the lock until the contender is blocked on it.
                while (contender[0] == null || contender[0].getState() != Thread.State.BLOCKED) {
                    pause(5);
                }
            }
        }, "holder");
        holder.start();
        while (holder.getState() != Thread.State.TIMED_WAITING) {
            Thread.sleep(5);
        }
        contender[0] = new Thread(() -> {
            synchronized (LOCK) {
                sink = LOCK;
            }
        }, "contender");
        contender[0].start();
        holder.join();
        contender[0].join();
        synchronized (WAITED) {
            WAITED.wait(50);
        }
        loadAndDrop();
        for (int i = 0; i < 10_000; i++) {
            sink = new Garbage();
        }
        sink = null;
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(100);
        }
        System.out.println("touched=" + t.touched + " stat=" + s);
    }
}
