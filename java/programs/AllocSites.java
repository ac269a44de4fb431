import java.util.ArrayList;
import java.util.List;

/**
 * The heap=sites test program: a known number of allocations per class, made by bytecode {@code new} and
 * {@code newarray} (which HPROF rebuilt for JDK 17 never saw) and by reflection (which the VM makes itself
 * and reports through VMObjectAlloc as well: it must not be counted twice).
 *
 * <p>100,000 Widgets of which 25,000 stay reachable; 70,000 Gadgets, all garbage; 1,000 long[333], all
 * garbage; 500 Reflected, all reachable. Every object escapes (a static field holds it) so that the JIT
 * cannot scalar-replace it. With an argument N it repeats the Widget/Gadget work N times more, for the
 * sampled-mode test; with a second argument S it then prints "allocated" and sleeps S seconds (for the
 * socket commands' test).
 */
public class AllocSites {
    static final class Widget {
        int id;
        long stamp;
        Object next;
    }

    static final class Gadget {
        int x;
    }

    public static final class Reflected {
        public Reflected() {}
    }

    static volatile Object sink;
    static List<Object> kept;

    static Widget makeWidget(int i) {
        Widget w = new Widget();
        w.id = i;
        return w;
    }

    static Gadget makeGadget(int i) {
        Gadget g = new Gadget();
        g.x = i;
        return g;
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        kept = new ArrayList<>(25_000 + 500);
        for (int i = 0; i < 100_000; i++) {
            Widget w = makeWidget(i);
            if (i % 4 == 0) {
                kept.add(w);
            } else {
                sink = w;
            }
        }
        for (int i = 0; i < 70_000; i++) {
            sink = makeGadget(i);
        }
        for (int i = 0; i < 1_000; i++) {
            sink = new long[333];
        }
        for (int i = 0; i < 500; i++) {
            kept.add(Reflected.class.getDeclaredConstructor().newInstance());
        }
        for (int r = 1; r < rounds; r++) {
            for (int i = 0; i < 100_000; i++) {
                sink = makeWidget(i);
            }
            for (int i = 0; i < 70_000; i++) {
                sink = makeGadget(i);
            }
        }
        sink = null;
        System.out.println("widgets=" + 100_000L * rounds);
        System.out.println("kept=" + kept.size());
        if (args.length > 1) {
            System.out.println("allocated");
            System.out.flush();
            Thread.sleep(Long.parseLong(args[1]) * 1000);
        }
    }
}
