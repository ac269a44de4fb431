import java.lang.reflect.Method;

/**
 * Calls methods a known number of times, through recursion, exceptions thrown through a frame that does
 * not catch them, constructors (one throwing after super()), a lambda, a synchronized method and, where
 * the JDK has them (21+), virtual threads. Prints what a profiler with exact counts must find:
 *   expected-calls CallCounts.recurse=100000 CallCounts.middle=5000 ...
 */
public class CallCounts {
    static int counter;
    static volatile Object sink;

    static int recurse(int n) {
        return n == 0 ? 0 : 1 + recurse(n - 1);
    }

    static void thrower(int i) {
        throw new IllegalStateException();
    }

    /** Exceptions from thrower pass through here uncaught. */
    static void middle(int i) {
        thrower(i);
    }

    static void afterExceptions() {
        counter++;
    }

    static final class Point {
        final int x;

        Point(int x) {
            this.x = x;
        }
    }

    static final class Checked {
        Checked(int v) {
            super();
            if (v < 0) throw new IllegalArgumentException();
        }
    }

    static synchronized void syncInc() {
        counter++;
    }

    static void lambdaBody() {
        counter++;
    }

    static void virtualBody() {
        counter++;
    }

    public static void main(String[] args) throws Exception {
        for (int r = 0; r < 1000; r++) recurse(99);
        for (int i = 0; i < 5000; i++) {
            try {
                middle(i);
            } catch (IllegalStateException e) {
                // expected
            }
        }
        afterExceptions();
        for (int i = 0; i < 30000; i++) sink = new Point(i);
        for (int i = 0; i < 2000; i++) {
            try {
                sink = new Checked(-1);
            } catch (IllegalArgumentException e) {
                // expected
            }
        }
        Runnable lambda = () -> lambdaBody();
        for (int i = 0; i < 40000; i++) lambda.run();
        for (int i = 0; i < 50000; i++) syncInc();

        StringBuilder expected = new StringBuilder("expected-calls CallCounts.recurse=100000 CallCounts.middle=5000"
                + " CallCounts.thrower=5000 CallCounts.afterExceptions=1 CallCounts$Point.<init>=30000"
                + " CallCounts$Checked.<init>=2000 CallCounts.lambda$main$0=40000 CallCounts.lambdaBody=40000"
                + " CallCounts.syncInc=50000");
        Method startVirtual = null;
        try {
            startVirtual = Thread.class.getMethod("startVirtualThread", Runnable.class);
        } catch (NoSuchMethodException e) {
            // JDK 17: no virtual threads
        }
        if (startVirtual != null) {
            for (int i = 0; i < 200; i++) {
                Thread t = (Thread) startVirtual.invoke(null, (Runnable) CallCounts::virtualBody);
                t.join();
            }
            expected.append(" CallCounts.virtualBody=200");
        }
        System.out.println(expected);
    }
}
