/** Ends with System.exit(3) while a non-daemon thread is still running. */
public class Exiter {
    public static void main(String[] args) throws Exception {
        Thread spinner = new Thread(() -> {
            while (true) {
                try { Thread.sleep(1000); } catch (InterruptedException e) { return; }
            }
        }, "spinner");
        spinner.start();
        System.out.println("exiting");
        System.exit(3);
    }
}
