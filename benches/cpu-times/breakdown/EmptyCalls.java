/** N calls of a near-empty static method, three times: CPU ns per call (the probes' cost with cpu=times). */
public class EmptyCalls {
    static int x;
    static void empty(int i) { x += i; }
    public static void main(String[] a) {
        int n = Integer.parseInt(a[0]);
        for (int r = 0; r < 3; r++) {
            long t0 = java.lang.management.ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
            for (int i = 0; i < n; i++) empty(i);
            long t1 = java.lang.management.ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
            System.out.println("ns/call " + (double)(t1 - t0) / n);
        }
    }
}
