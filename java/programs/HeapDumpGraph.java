import java.io.File;

/**
 * A known object graph for the heap dump tests: a 123,457-node linked list held by a static field, objects
 * whose fields of every type have known values, arrays of every kind (with nulls inside and at the end),
 * statics of every type, an object held only by a local variable of main, and a lock main holds.
 *
 * Argument "wait": after building, prints "ready" and waits (holding LOCK) until a file named "release"
 * appears in the working directory. Argument "sleep": prints "ready" and sleeps ten minutes, allocating
 * nothing, for a heap that stays still while it is measured. Otherwise it returns at once. It prints
 * "done" at the end.
 */
public class HeapDumpGraph {
    public static final int NODES = 123_457;

    /** Interface fields come first in JVMTI's field numbering: they test the index mapping. */
    interface Constants {
        int ANSWER = 42;
        String NAME = "graph";
    }

    interface Labeled extends Constants {
        long LABEL_SEED = 7L;
    }

    static class Base implements Labeled {
        static int baseStatic = 99;
        long baseLong = 0x1122334455667788L;
        Object baseRef = "base-ref";
    }

    static class Node extends Base {
        int value;
        Node next;
        byte b = -7;
        char c = 'Z';
        short s = -2;
        float f = 1.5f;
        double d = -2.25;
        boolean z = true;

        Node(int value, Node next) {
            this.value = value;
            this.next = next;
        }
    }

    /** Held only by a local variable of main: a JAVA FRAME root. */
    static class LocalMarker {
        final int id = 5;
    }

    static final Object LOCK = new Object();

    static Node head;
    static boolean staticBoolean = true;
    static byte staticByte = -5;
    static char staticChar = 'q';
    static short staticShort = 1234;
    static int staticInt = -123456;
    static long staticLong = Long.MIN_VALUE + 1;
    static float staticFloat = 3.25f;
    static double staticDouble = 6.5e300;

    static int[] ints = {1, 2, 3, Integer.MAX_VALUE, -1};
    static long[] longs = {Long.MAX_VALUE, -2L};
    static double[] doubles = {0.5, -1e-300};
    static float[] floats = {-0.0f, 2.5f};
    static char[] chars = {'h', 'i', '\u00e9'};
    static byte[] bytes = {1, -128, 127};
    static short[] shorts = {-32768, 32767};
    static boolean[] booleans = {true, false, true};
    static Object[] mixed = new Object[10];
    /** Over 1 MiB each in a dump: a segment of their own. */
    static long[] bigLongs = new long[300_000];
    static Object[] wide = new Object[200_000];
    static String[][] nested = {{"a", null, "b"}, null, {}};

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < NODES; i++) {
            head = new Node(i, head);
        }
        mixed[2] = "two";
        mixed[5] = head;
        mixed[6] = ints;
        bigLongs[299_999] = 42;
        wide[0] = "first";
        wide[199_998] = "last but one";
        LocalMarker local = new LocalMarker();
        String mode = args.length > 0 ? args[0] : "";
        boolean wait = mode.equals("wait");
        if (mode.equals("sleep")) {
            System.out.println("ready");
            System.out.flush();
            Thread.sleep(600_000);
        }
        synchronized (LOCK) {
            System.out.println("ready");
            System.out.flush();
            File release = new File("release");
            while (wait && !release.exists()) {
                Thread.sleep(20);
            }
        }
        System.out.println("done " + local.id);
    }
}
