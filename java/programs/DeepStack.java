/**
 * Burns CPU at the bottom of a recursion `depth` frames deep (default 3000) for the given seconds
 * (default 3), so that every sample's stack is deeper than a sampler's frame limit. Prints "done".
 */
public class DeepStack {
    static volatile long sink;

    public static void main(String[] args) {
        int depth = args.length > 0 ? Integer.parseInt(args[0]) : 3000;
        double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 3;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        while (System.nanoTime() < end) {
            sink += recurse(depth);
        }
        System.out.println("done");
    }

    static long recurse(int n) {
        if (n == 0) {
            long h = sink;
            for (int i = 0; i < 200_000; i++) {
                h = h * 6364136223846793005L + 1442695040888963407L;
            }
            return h;
        }
        return recurse(n - 1) + 1;
    }
}
