/**
 * A thread whose name carries terminal escape sequences (it would retitle and clear the terminal, then
 * start a fake line, if printed raw) runs for a second on the CPU, so that the profile's names, thread
 * starts and CPU samples all carry it.
 */
public class EvilNames {
    static final String EVIL = "evil\u001b]0;owned\u0007\u001b[2J\r\nfake line";

    public static void main(String[] args) throws Exception {
        Thread t = new Thread(() -> {
            long end = System.nanoTime() + 1_000_000_000L;
            long x = 0;
            while (System.nanoTime() < end) {
                x += System.identityHashCode(new Object());
            }
            System.out.println(x == 42 ? "" : "done");
        }, EVIL);
        t.start();
        t.join();
    }
}
