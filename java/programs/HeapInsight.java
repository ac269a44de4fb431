import java.io.File;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * A heap with known waste, a class-loader leak and threads whose frames hold known objects, for
 * `hprof waste`, `loaders`, `threads` and `diff --objects`. Prints what it made ("expect key=value"), then
 * "ready"; once the file named by its first argument appears, adds GROWN objects and prints "grown".
 */
public class HeapInsight {
    static final int DUP_A = 200, DUP_A_LEN = 50;
    static final int DUP_B = 50, DUP_B_LEN = 30;
    static final int EMPTY_MAPS = 120;
    static final int BOXES = 500, BOX_CAPACITY = 1200;
    static final int DUP_ARRAYS = 30, DUP_ARRAY_LEN = 77;
    static final int LEAKED_LOADERS = 3;
    static final int GROWN = 250, GROWN_BYTES = 1000;

    /** Empty maps of a class of their own, so that the JDK's own maps do not blur the count. */
    static class EmptyMap extends HashMap<String, String> {}

    static class BoxList extends ArrayList<Integer> {
        BoxList(int capacity) {
            super(capacity);
        }
    }

    /** Loaded again by each "deployment"'s loader. */
    public static class Plugin {
        public final byte[] state = new byte[4096];
    }

    /** A loader with a lifecycle like Tomcat's web application loader, destroyed without close(). */
    static class WebappLoader extends URLClassLoader {
        enum LifecycleState { STARTED, STOPPED, DESTROYED }

        volatile LifecycleState state = LifecycleState.STARTED;

        WebappLoader(URL[] path) {
            super(path, null);
        }
    }

    static class Grown {
        final byte[] payload = new byte[GROWN_BYTES];
    }

    static String[] duplicates;
    static EmptyMap[] emptyMaps;
    static BoxList boxes;
    static int[][] dupArrays;
    static final List<Object> LEAK = new ArrayList<>();
    static URLClassLoader active;
    static final List<Grown> GROWTH = new ArrayList<>(1000);
    static final CountDownLatch HOLD = new CountDownLatch(1);

    static String text(char c, int len) {
        StringBuilder b = new StringBuilder("HeapInsight-dup-");
        while (b.length() < len) b.append(c);
        return b.toString();
    }

    public static void main(String[] args) throws Exception {
        duplicates = new String[DUP_A + DUP_B];
        String a = text('a', DUP_A_LEN), b = text('b', DUP_B_LEN);
        // new String(char[]) copies: each String has an array of its own.
        for (int i = 0; i < DUP_A; i++) duplicates[i] = new String(a.toCharArray());
        for (int i = 0; i < DUP_B; i++) duplicates[DUP_A + i] = new String(b.toCharArray());
        emptyMaps = new EmptyMap[EMPTY_MAPS];
        for (int i = 0; i < EMPTY_MAPS; i++) emptyMaps[i] = new EmptyMap();
        boxes = new BoxList(BOX_CAPACITY);
        for (int i = 0; i < BOXES; i++) boxes.add(100_000 + i); // outside Integer's cache: distinct boxes
        dupArrays = new int[DUP_ARRAYS][];
        for (int i = 0; i < DUP_ARRAYS; i++) {
            dupArrays[i] = new int[DUP_ARRAY_LEN];
            for (int k = 0; k < DUP_ARRAY_LEN; k++) dupArrays[i][k] = k * 7 + 3;
        }

        // Deploy and undeploy: each loader defines Plugin again; an instance kept in LEAK holds its loader
        // after close(). One more loader stays deployed; one is undeployed cleanly (and collected).
        URL[] path = {new File(HeapInsight.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toURI().toURL()};
        new Plugin();
        for (int i = 0; i < LEAKED_LOADERS + 1; i++) {
            URLClassLoader l = new URLClassLoader(path, null);
            Object p = l.loadClass("HeapInsight$Plugin").getDeclaredConstructor().newInstance();
            if (i < LEAKED_LOADERS) LEAK.add(p);
            l.close();
        }
        WebappLoader webapp = new WebappLoader(path);
        LEAK.add(webapp.loadClass("HeapInsight$Plugin").getDeclaredConstructor().newInstance());
        webapp.state = WebappLoader.LifecycleState.DESTROYED;
        webapp = null;
        active = new URLClassLoader(path, null);
        active.loadClass("HeapInsight$Plugin").getDeclaredConstructor().newInstance();

        Thread worker = new Thread(HeapInsight::work, "insight-worker");
        worker.setDaemon(true);
        worker.start();
        while (worker.getState() != Thread.State.WAITING) Thread.sleep(10);
        System.gc(); // unloads the cleanly undeployed loader before any dump (the agent's takes no collection)

        // main's frame still holds a and b themselves: one string more of each value.
        System.out.println("expect dup_a=" + (DUP_A + 1) + " dup_a_len=" + a.length() + " dup_b=" + (DUP_B + 1) + " dup_b_len=" + b.length());
        System.out.println("expect empty_maps=" + EMPTY_MAPS + " boxes=" + BOXES + " box_capacity=" + BOX_CAPACITY);
        System.out.println("expect dup_arrays=" + DUP_ARRAYS + " dup_array_len=" + DUP_ARRAY_LEN);
        System.out.println("expect leaked_loaders=" + LEAKED_LOADERS + " destroyed_loaders=1 grown=" + GROWN);
        System.out.println("ready");
        File trigger = new File(args.length > 0 ? args[0] : "grow");
        while (!trigger.exists()) Thread.sleep(20);
        for (int i = 0; i < GROWN; i++) GROWTH.add(new Grown());
        System.out.println("grown");
        Thread.sleep(600_000);
    }

    /** Holds a byte[100000] in this frame and an int[5000] in the next, until the JVM ends. */
    static void work() {
        byte[] outer = new byte[100_000];
        inner();
        System.out.println(outer.length);
    }

    static void inner() {
        int[] held = new int[5_000];
        try {
            HOLD.await();
        } catch (InterruptedException e) {
            return;
        }
        System.out.println(held.length);
    }
}
