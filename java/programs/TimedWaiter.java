/**
 * Object.wait twice: the main thread waits 300 ms on a Mailbox with a timeout and nobody notifies it; the
 * thread "bell-waiter" waits on a Doorbell without a timeout until main rings it about 200 ms later.
 * Prints the waits it measured.
 */
public class TimedWaiter {
    static final class Mailbox {}
    static final class Doorbell {}

    static boolean rung;

    public static void main(String[] args) throws Exception {
        Mailbox mailbox = new Mailbox();
        long before = System.nanoTime();
        synchronized (mailbox) {
            mailbox.wait(300);
        }
        System.out.println("timed_wait_ms=" + (System.nanoTime() - before) / 1_000_000);

        Doorbell bell = new Doorbell();
        Thread waiter = new Thread(() -> {
            long start = System.nanoTime();
            synchronized (bell) {
                while (!rung) {
                    try {
                        bell.wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
            System.out.println("bell_wait_ms=" + (System.nanoTime() - start) / 1_000_000);
        }, "bell-waiter");
        waiter.start();
        while (waiter.getState() != Thread.State.WAITING) Thread.sleep(5);
        Thread.sleep(200);
        synchronized (bell) {
            rung = true;
            bell.notifyAll();
        }
        waiter.join();
    }
}
