import java.io.File;
import java.util.ArrayList;
import java.util.List;

/**
 * Loads classes while heap dumps are taken: a thread defines HeapDumpChurnPayload again and again, each time
 * in a new class loader, and keeps one instance of each, until CLASSES (default 30,000) are loaded. Prints
 * "ready" when the thread has started and waits until a file named "release" appears.
 */
public class HeapDumpClassChurn {
    static final List<Object> KEEP = new ArrayList<>();

    static final class OneClassLoader extends ClassLoader {
        OneClassLoader() {
            super(HeapDumpClassChurn.class.getClassLoader());
        }

        Class<?> define(byte[] bytes) {
            return defineClass("HeapDumpChurnPayload", bytes, 0, bytes.length);
        }
    }

    public static void main(String[] args) throws Exception {
        int classes = args.length > 0 ? Integer.parseInt(args[0]) : 30_000;
        byte[] bytes;
        try (var in = HeapDumpClassChurn.class.getResourceAsStream("HeapDumpChurnPayload.class")) {
            bytes = in.readAllBytes();
        }
        Thread churn = new Thread(() -> {
            try {
                for (int i = 0; i < classes; i++) {
                    Object o = new OneClassLoader().define(bytes).getConstructor().newInstance();
                    synchronized (KEEP) {
                        KEEP.add(o);
                    }
                }
            } catch (ReflectiveOperationException e) {
                throw new RuntimeException(e);
            }
        }, "churn");
        churn.start();
        System.out.println("ready");
        System.out.flush();
        File release = new File("release");
        while (!release.exists()) {
            Thread.sleep(20);
        }
        churn.join();
        System.out.println("done " + KEEP.size());
    }
}
