import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;

/** A CPU-bound workload for overhead benchmarks: sorting, hashing, arithmetic. Arg: rounds (default 40). */
public class CpuBound {
    static long sortWork(Random r) {
        int[] a = new int[200_000];
        for (int i = 0; i < a.length; i++) a[i] = r.nextInt();
        Arrays.sort(a);
        return a[a.length / 2];
    }

    static long mapWork(Random r) {
        Map<Integer, Integer> m = new HashMap<>();
        for (int i = 0; i < 200_000; i++) m.merge(r.nextInt(50_000), 1, Integer::sum);
        return m.size();
    }

    static long matmul(int n) {
        double[][] a = new double[n][n], b = new double[n][n], c = new double[n][n];
        for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) { a[i][j] = i + j; b[i][j] = i - j; }
        for (int i = 0; i < n; i++) for (int k = 0; k < n; k++) { double x = a[i][k]; for (int j = 0; j < n; j++) c[i][j] += x * b[k][j]; }
        return (long) c[n / 2][n / 2];
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 40;
        Random r = new Random(42);
        long sink = 0;
        for (int i = 0; i < rounds; i++) {
            sink += sortWork(r) + mapWork(r) + matmul(120);
        }
        System.out.println("done " + sink);
    }
}
