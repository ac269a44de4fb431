/**
 * The JVMPI method counter's program: three threads run the same code one after the other, calling
 * {@code work} 0, 1,000 and 3,000 times. Whatever else a thread runs (Thread.run, its exit) is the same for
 * all three, so their method counts differ by exactly 1,000 and 2,000.
 */
public class JvmpiThreads {
    static int sink;

    static int work(int x) {
        return x + 1;
    }

    static final class Worker implements Runnable {
        final int calls;

        Worker(int calls) {
            this.calls = calls;
        }

        @Override
        public void run() {
            int s = 0;
            for (int i = 0; i < calls; i++) {
                s = work(s);
            }
            sink += s;
        }
    }

    public static void main(String[] args) throws Exception {
        String[] names = {"calls-0", "calls-1000", "calls-3000"};
        int[] calls = {0, 1000, 3000};
        for (int i = 0; i < names.length; i++) {
            Thread t = new Thread(new Worker(calls[i]), names[i]);
            t.start();
            t.join();
        }
        System.out.println("sink=" + sink);
    }
}
