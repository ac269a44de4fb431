/**
 * Two small hot methods that the JIT inlines into one loop: alpha does three times beta's work. A sampler
 * that maps a PC only to the nearest safepoint's debug information puts nearly every sample on main; ours
 * must see alpha and beta (CompiledMethodLoad makes HotSpot record debug information between safepoints).
 * Args: seconds to run (default 4).
 */
public class InlinedHot {
    static long alpha(long h) {
        for (int i = 0; i < 300; i++) {
            h = h * 6364136223846793005L + 1442695040888963407L;
            h ^= (h >>> 29);
        }
        return h;
    }

    static long beta(long h) {
        for (int i = 0; i < 100; i++) {
            h = h * 2862933555777941757L + 3037000493L;
            h ^= (h >>> 31);
        }
        return h;
    }

    public static void main(String[] args) {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 4;
        long h = 1;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        while (System.nanoTime() < end) {
            for (int k = 0; k < 1000; k++) {
                h = alpha(h);
                h = beta(h);
            }
        }
        System.out.println("done " + h);
    }
}
