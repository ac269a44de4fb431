import java.util.ArrayList;
import java.util.List;

/**
 * Fills the heap with long[4]s until an OutOfMemoryError, catches it, keeps everything, spins a little on
 * the CPU (so that cpu=samples has samples), and returns from main with the heap still full. Run it with
 * a small -Xmx. Prints "filling" before it starts; nothing after (printing would allocate, and fail).
 * With the argument "die" it throws the OutOfMemoryError on out of main instead, the heap still full.
 * With "keep N" it allocates N long[4]s only (a big heap dump, no OutOfMemoryError), prints "kept", returns.
 */
public class HeapFiller {
    static volatile long sink;
    /** Static, so that everything stays reachable after main returns, into the exit dump. */
    static final List<long[]> hoard = new ArrayList<>();

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
