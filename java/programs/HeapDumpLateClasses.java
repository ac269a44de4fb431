import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;

/**
 * Loads class hierarchies while heap dumps are taken, in the order javac does: a superclass is loaded (not
 * linked) well before its subclass. Each of PENDING class loaders holds a loaded, unlinked HeapDumpLateBase;
 * the oldest then gets its HeapDumpLateSub loaded, linked and instantiated (linking Base only then), and a
 * fresh loader takes its place. The last KEPT instances stay reachable; older loaders may be unloaded. Prints
 * "ready" once running and stops when a file named "release" appears, printing "done N".
 */
public class HeapDumpLateClasses {
    static final int PENDING = 200;
    static final int KEPT = 2_000;

    /** Defines the two HeapDumpLate classes itself, from the application's class files. */
    static final class ChildFirst extends ClassLoader {
        ChildFirst() {
            super(HeapDumpLateClasses.class.getClassLoader());
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.equals("HeapDumpLateBase") && !name.equals("HeapDumpLateSub")) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    byte[] b = bytes(name);
                    c = defineClass(name, b, 0, b.length);
                }
                return c;
            }
        }
    }

    static byte[] bytes(String name) {
        try (var in = HeapDumpLateClasses.class.getResourceAsStream("/" + name + ".class")) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static ChildFirst withBase() throws ClassNotFoundException {
        ChildFirst l = new ChildFirst();
        l.loadClass("HeapDumpLateBase");
        return l;
    }

    public static void main(String[] args) throws Exception {
        ArrayDeque<ChildFirst> pending = new ArrayDeque<>();
        for (int i = 0; i < PENDING; i++) {
            pending.add(withBase());
        }
        ArrayDeque<Object> kept = new ArrayDeque<>();
        File release = new File("release");
        System.out.println("ready");
        System.out.flush();
        long made = 0;
        while (made % 64 != 0 || !release.exists()) {
            Class<?> sub = Class.forName("HeapDumpLateSub", true, pending.poll());
            kept.add(sub.getConstructor().newInstance());
            if (kept.size() > KEPT) {
                kept.poll();
            }
            pending.add(withBase());
            made++;
            // About a thousand hierarchies a second: enough to meet every dump, little metaspace.
            Thread.sleep(1);
        }
        System.out.println("done " + made);
    }
}
