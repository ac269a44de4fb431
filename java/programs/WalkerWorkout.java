import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Allocations from every kind of frame the agent's stack walker meets, for the test that checks it against
 * JVMTI: interpreted code, C1 and C2 code (loops long enough to be compiled, small methods to be inlined),
 * recursion deeper than any trace depth, calls through reflection (the VM's call stub: an entry frame in the
 * middle of the stack), lambdas and streams, string concatenation (invokedynamic), exceptions, clones,
 * multi-dimensional arrays, several threads at once, and virtual threads where the JDK has them.
 * Prints "done N" with a checksum so that nothing is optimised away.
 */
public class WalkerWorkout {
    static volatile Object sink;
    static long checksum;

    static final class Point {
        final int x;
        final int y;

        Point(int x, int y) {
            this.x = x;
            this.y = y;
        }

        Point plus(Point o) {
            return new Point(x + o.x, y + o.y);
        }
    }

    public static final class ViaReflection {
        final int[] payload;

        public ViaReflection() {
            payload = new int[3];
        }
    }

    /** Inlined into loop(): its allocation is attributed to it, not to the caller. */
    static Point inlinedPoint(int i) {
        return new Point(i, -i);
    }

    static long loop(int n) {
        Point acc = new Point(0, 0);
        for (int i = 0; i < n; i++) {
            acc = acc.plus(inlinedPoint(i));
            if ((i & 1023) == 0) {
                sink = new long[i & 63];
            }
        }
        return acc.x + acc.y;
    }

    static Object recurse(int depth) {
        if (depth == 0) {
            return new StringBuilder("leaf").append(checksum).toString();
        }
        Object o = recurse(depth - 1);
        return depth % 3 == 0 ? new Object[] {o} : o;
    }

    public static Object reflected(int i) {
        return new Point(i, i);
    }

    static void viaReflection(int rounds) throws Exception {
        Method m = WalkerWorkout.class.getMethod("reflected", int.class);
        Constructor<ViaReflection> c = ViaReflection.class.getConstructor();
        for (int i = 0; i < rounds; i++) {
            sink = m.invoke(null, i);
            sink = c.newInstance();
        }
    }

    static void lambdasAndStreams(int rounds) {
        for (int round = 0; round < rounds; round++) {
            int r = round;
            List<String> words = IntStream.range(0, 50).mapToObj(i -> "w" + i + r).collect(Collectors.toList());
            Map<Integer, List<String>> byLength = words.stream().collect(Collectors.groupingBy(String::length));
            checksum += byLength.size();
        }
    }

    static void exceptionsAndClones(int rounds) {
        int[] base = new int[16];
        for (int i = 0; i < rounds; i++) {
            try {
                Object o = i % 2 == 0 ? null : "x";
                checksum += o.hashCode();
            } catch (NullPointerException e) {
                checksum++;
            }
            sink = base.clone();
            sink = new int[2][3];
        }
    }

    static void collections(int rounds) {
        for (int r = 0; r < rounds; r++) {
            Map<String, List<Integer>> m = new HashMap<>();
            for (int i = 0; i < 200; i++) {
                m.computeIfAbsent("k" + (i % 17), k -> new ArrayList<>()).add(i);
            }
            checksum += m.size();
        }
    }

    static void work(int scale) throws Exception {
        checksum += loop(200_000 * scale);
        for (int i = 0; i < 200 * scale; i++) {
            sink = recurse(20 + i % 7);
        }
        viaReflection(2_000 * scale);
        lambdasAndStreams(100 * scale);
        exceptionsAndClones(5_000 * scale);
        collections(200 * scale);
    }

    public static void main(String[] args) throws Exception {
        int scale = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        // Cold (interpreted) first, then hot enough for C1 and C2.
        work(1);
        for (int round = 0; round < 3; round++) {
            work(scale);
        }
        ExecutorService pool = Executors.newFixedThreadPool(3);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
            done.add(pool.submit(() -> {
                work(scale);
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get();
        }
        pool.shutdown();
        try {
            ExecutorService virtual =
                    (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
            List<Future<?>> vdone = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                vdone.add(virtual.submit(() -> {
                    work(1);
                    return null;
                }));
            }
            for (Future<?> f : vdone) {
                f.get();
            }
            virtual.shutdown();
        } catch (NoSuchMethodException e) {
            // JDK 17: no virtual threads.
        }
        System.out.println("done " + checksum);
    }
}
