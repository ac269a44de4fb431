import java.lang.ref.WeakReference;

/**
 * A heap of known shape for the front end's tests, kept alive until killed:
 *   - one HeapShape$Holder (static HOLDER) owning a HeapShape$Node[] of 1000 Nodes, each Node's
 *     `payload` a long[4]; nothing else points at them, so the Holder retains all of it;
 *   - a chain of 500 HeapShape$Link objects from static CHAIN (each retains the rest of the chain);
 *   - a HeapShape$Weak holding a WeakReference to a HeapShape$Orphan that nothing else holds (the
 *     dump's GC clears or drops it; either way the WeakReference must not retain it);
 *   - a HeapShape$Shared reachable from two Nodes, so that no Node dominates it.
 * Prints "ready" once built. With compressed oops: Node 24 bytes, long[4] 48, Node[1000] 4016, Holder 16,
 * Link 24, Shared 24. Built in a method of its own so that no local variable of main's frame is a GC root.
 */
public class HeapShape {
    static final class Node {
        long[] payload = new long[4];
        Object extra;
        int index;
    }

    static final class Holder {
        Node[] nodes;
    }

    static final class Link {
        Link next;
        int value;
    }

    static final class Orphan {
        long a, b, c;
    }

    static final class Shared {
        long x;
    }

    static Holder HOLDER;
    static Link CHAIN;
    static WeakReference<Orphan> WEAK;

    static void build() {
        Holder h = new Holder();
        h.nodes = new Node[1000];
        for (int i = 0; i < 1000; i++) {
            h.nodes[i] = new Node();
            h.nodes[i].index = i;
        }
        Shared s = new Shared();
        h.nodes[1].extra = s;
        h.nodes[2].extra = s;
        HOLDER = h;
        Link head = null;
        for (int i = 0; i < 500; i++) {
            Link l = new Link();
            l.next = head;
            l.value = i;
            head = l;
        }
        CHAIN = head;
        WEAK = new WeakReference<>(new Orphan());
    }

    public static void main(String[] args) throws Exception {
        build();
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(600_000);
    }
}
