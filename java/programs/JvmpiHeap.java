import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The JVMPI dump agents' program: a known heap and known monitors, held until the file "release" appears
 * in the working directory.
 *
 * <p>Heap: 5,000 {@code Node}s in a chain from a static field, values 0..4999 (sum 12,497,500), one
 * {@code long[100]} and one {@code Node[50]}. Monitors: thread "owner" holds {@code HELD} (entered twice),
 * thread "blocked" waits to enter it, thread "waiter" waits on {@code SIGNAL} to be notified.
 */
public class JvmpiHeap {
    static final class Node {
        int value;
        Node next;

        Node(int value, Node next) {
            this.value = value;
            this.next = next;
        }
    }

    static Node chain;
    static long[] longs = new long[100];
    static Node[] firstNodes = new Node[50];
    static final Object HELD = new Object();
    static final Object SIGNAL = new Object();
    static volatile boolean released;

    public static void main(String[] args) throws Exception {
        for (int i = 4999; i >= 0; i--) {
            chain = new Node(i, chain);
        }
        Node n = chain;
        for (int i = 0; i < firstNodes.length; i++, n = n.next) {
            firstNodes[i] = n;
        }
        Thread owner = new Thread(() -> {
            synchronized (HELD) {
                synchronized (HELD) {
                    while (!released) {
                        sleep(20);
                    }
                }
            }
        }, "owner");
        owner.start();
        while (owner.getState() != Thread.State.TIMED_WAITING) {
            Thread.sleep(5);
        }
        Thread blocked = new Thread(() -> {
            synchronized (HELD) {
                released = true;
            }
        }, "blocked");
        blocked.start();
        Thread waiter = new Thread(() -> {
            synchronized (SIGNAL) {
                try {
                    SIGNAL.wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }, "waiter");
        waiter.start();
        while (blocked.getState() != Thread.State.BLOCKED || waiter.getState() != Thread.State.WAITING) {
            Thread.sleep(5);
        }
        System.out.println("ready");
        System.out.flush();
        while (!Files.exists(Path.of("release"))) {
            Thread.sleep(20);
        }
        released = true;
        synchronized (SIGNAL) {
            SIGNAL.notifyAll();
        }
        owner.join();
        blocked.join();
        waiter.join();
        System.out.println("done sum=" + sum());
    }

    static long sum() {
        long s = 0;
        for (Node n = chain; n != null; n = n.next) {
            s += n.value;
        }
        return s;
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
