import java.io.PrintWriter;

/**
 * CpuBound's work in small units, timed: runs for the given seconds, records when each unit ends
 * (System.nanoTime, the CLOCK_MONOTONIC a benchmark script reads too) and writes those times, one per line,
 * to the given file. Lets a script compare the program's speed with sampling on and off inside one JVM.
 * Args: seconds, output file.
 */
public class CpuSteady {
    public static void main(String[] args) throws Exception {
        double seconds = Double.parseDouble(args[0]);
        long[] ends = new long[(int) (seconds * 2000) + 16];
        java.util.Random r = new java.util.Random(42);
        long sink = 0;
        long stop = System.nanoTime() + (long) (seconds * 1e9);
        int n = 0;
        for (int unit = 0; n < ends.length; unit++) {
            switch (unit % 3) {
                case 0 -> sink += CpuBound.sortWork(r);
                case 1 -> sink += CpuBound.mapWork(r);
                default -> sink += CpuBound.matmul(120);
            }
            long now = System.nanoTime();
            ends[n++] = now;
            if (now > stop) break;
        }
        try (PrintWriter out = new PrintWriter(args[1])) {
            for (int i = 0; i < n; i++) out.println(ends[i]);
        }
        System.out.println("done " + n + " units " + sink);
    }
}
