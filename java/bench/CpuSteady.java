import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import jdk.jfr.Recording;

/**
 * CpuBound's work in small units, timed: runs for the given seconds, records when each unit ends
 * (System.nanoTime, the CLOCK_MONOTONIC a benchmark script reads too) and writes those times, one per line,
 * to the given file. Lets a script compare the program's speed with sampling on and off inside one JVM.
 * Args: seconds, output file [, JFR switches file, warm-up seconds, phase seconds]. With the last three the
 * program switches JFR's own sampler (jdk.ExecutionSample every 10 ms, as settings=profile) on and off
 * itself — on during the warm-up, then every phase — and writes each switch as "time on" to that file, so
 * that JFR is measured the way the script measures the agent.
 */
public class CpuSteady {
    public static void main(String[] args) throws Exception {
        double seconds = Double.parseDouble(args[0]);
        if (args.length >= 5) {
            switchJfr(args[2], Double.parseDouble(args[3]), Double.parseDouble(args[4]), seconds);
        }
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

    static void switchJfr(String switchesFile, double warmUp, double phase, double seconds) {
        Recording recording = new Recording();
        recording.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(10));
        recording.setToDisk(false);
        recording.start();
        Thread switcher = new Thread(() -> {
            List<String> switches = new ArrayList<>();
            long start = System.nanoTime();
            long next = start + (long) (warmUp * 1e9);
            long last = start + (long) ((seconds - phase) * 1e9);
            boolean on = true;
            try {
                while (next < last) {
                    long wait = next - System.nanoTime();
                    if (wait > 0) Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                    on = !on;
                    if (on) recording.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(10));
                    else recording.disable("jdk.ExecutionSample");
                    switches.add(System.nanoTime() + " " + (on ? 1 : 0));
                    next += (long) (phase * 1e9);
                }
                try (PrintWriter out = new PrintWriter(switchesFile)) {
                    switches.forEach(out::println);
                }
            } catch (Exception e) {
                e.printStackTrace();
            }
        }, "jfr-switcher");
        switcher.setDaemon(true);
        switcher.start();
    }
}
