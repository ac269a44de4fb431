import java.io.File;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/**
 * javac's work in small units, timed, like CpuSteady: compiles three JDK sources in turn (one per unit,
 * in-process through javax.tools) for the given seconds and writes when each unit ended (System.nanoTime),
 * one per line, to the given file. Deep stacks, many allocations, a warmed-up JIT: the steady-state twin of
 * the javac benchmark. Args: seconds, output file, the directory holding java.base/java/util/*.java.
 */
public class JavacSteady {
    static final String[] FILES = {"Optional.java", "BitSet.java", "ArrayDeque.java"};

    public static void main(String[] args) throws Exception {
        double seconds = Double.parseDouble(args[0]);
        Path src = Path.of(args[2]);
        Path out = Files.createTempDirectory("javac-steady");
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        long[] ends = new long[(int) (seconds * 200) + 16];
        long stop = System.nanoTime() + (long) (seconds * 1e9);
        int n = 0;
        for (int unit = 0; n < ends.length; unit++) {
            List<String> argv = new ArrayList<>(List.of("-nowarn", "-proc:none", "--patch-module",
                    "java.base=" + src.resolve("java.base"), "-d", out.toString()));
            argv.add(src.resolve("java.base/java/util/" + FILES[unit % FILES.length]).toString());
            int rc = javac.run(null, null, null, argv.toArray(new String[0]));
            if (rc != 0) throw new IllegalStateException("javac failed: " + rc);
            long now = System.nanoTime();
            ends[n++] = now;
            if (now > stop) break;
        }
        try (PrintWriter w = new PrintWriter(args[1])) {
            for (int i = 0; i < n; i++) w.println(ends[i]);
        }
        System.out.println("done " + n + " units");
    }
}
