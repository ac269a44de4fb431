import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Calls with known counts, in rounds a test starts from outside, for cpu=times attached to a running JVM.
 * Prints "ready", then for each round waits until the file "go-N" exists in the working directory
 * (N = 1, 2, …; at most `rounds`, default 2), makes its calls and prints
 *   round N expected-calls AttachCalls.work=100000 AttachCalls.recurse=550 AttachCalls$Box.<init>=20000
 * An exception thrown through recurse's frames is caught every tenth round of recursion.
 */
public class AttachCalls {
    static long sink;

    static final class Box {
        final int v;
        Box(int v) { this.v = v; }
    }

    static int work(int i) {
        return i * 31 + 7;
    }

    static int recurse(int n) {
        if (n == 0) {
            throw new IllegalStateException("bottom");
        }
        return recurse(n - 1) + 1;
    }

    static void round(int n) {
        for (int i = 0; i < 100_000; i++) {
            sink += work(i);
        }
        for (int r = 0; r < 10; r++) {
            try {
                sink += recurse(54);
            } catch (IllegalStateException e) {
                sink++;
            }
        }
        for (int i = 0; i < 20_000; i++) {
            sink += new Box(i).v;
        }
        System.out.println("round " + n
            + " expected-calls AttachCalls.work=100000 AttachCalls.recurse=550 AttachCalls$Box.<init>=20000");
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        System.out.println("ready");
        System.out.flush();
        for (int n = 1; n <= rounds; n++) {
            Path go = Path.of("go-" + n);
            while (!Files.exists(go)) {
                Thread.sleep(20);
            }
            round(n);
        }
        System.out.println("sink " + sink);
    }
}
