import java.util.ArrayList;
import java.util.List;

/**
 * Fills the heap with long[4]s until an OutOfMemoryError, catches it, keeps everything, spins a little on
 * the CPU (so that cpu=samples has samples), and returns from main with the heap still full. Run it with
 * a small -Xmx. Prints "filling" before it starts; nothing after (printing would allocate, and fail).
 * With the argument "die" it throws the OutOfMemoryError on out of main instead, the heap still full.
 * With "chain" it fills the heap to its last bytes with a chain of Object[1]s (`filled` counts them) and
 * the OutOfMemoryError escapes main.
 * With "keep N" it allocates N long[4]s only (a big heap dump, no OutOfMemoryError), prints "kept", returns.
 */
public class HeapFiller {
    static volatile long sink;
    /** Static, so that everything stays reachable after main returns, into the exit dump. */
    static final List<long[]> hoard = new ArrayList<>();
    /** With "chain": the last link of a chain of Object[1]s, each holding the one before. */
    static Object[] chain;
    /** How many links the chain has, for a dump to be checked against (counting allocates nothing). */
    static long filled;

    public static void main(String[] args) {
        boolean die = args.length > 0 && args[0].equals("die");
        long spin = 0;
        for (int i = 0; i < 20_000_000; i++) {
            spin = spin * 6364136223846793005L + i;
        }
        sink = spin;
        if (args.length > 1 && args[0].equals("keep")) {
            int n = Integer.parseInt(args[1]);
            for (int i = 0; i < n; i++) {
                hoard.add(new long[4]);
            }
            System.out.println("kept");
            return;
        }
        System.out.println("filling");
        if (args.length > 0 && args[0].equals("chain")) {
            // No list to grow: the OutOfMemoryError comes when not even 24 bytes are left, and escapes main.
            while (true) {
                Object[] link = new Object[1];
                link[0] = chain;
                chain = link;
                filled++;
            }
        }
        try {
            while (true) {
                hoard.add(new long[4]);
            }
        } catch (OutOfMemoryError e) {
            // Everything stays reachable: the heap is full as main returns.
            sink += hoard.size();
            if (die) {
                throw e;
            }
        }
    }
}
