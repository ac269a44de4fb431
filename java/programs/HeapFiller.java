import java.util.ArrayList;
import java.util.List;

/**
 * Fills the heap with long[4]s until an OutOfMemoryError, catches it, keeps everything, spins a little on
 * the CPU (so that cpu=samples has samples), and returns from main with the heap still full. Run it with
 * a small -Xmx. Prints "full <count>" once the heap is full.
 */
public class HeapFiller {
    static volatile long sink;

    public static void main(String[] args) {
        List<long[]> hoard = new ArrayList<>();
        long spin = 0;
        for (int i = 0; i < 20_000_000; i++) {
            spin = spin * 6364136223846793005L + i;
        }
        sink = spin;
        try {
            while (true) {
                hoard.add(new long[4]);
            }
        } catch (OutOfMemoryError e) {
            // Everything stays reachable: the heap is full as main returns.
            System.out.println("full " + hoard.size());
        }
        sink += hoard.size();
    }
}
