/** Prints "ready" and sleeps (default 120 s) so that a test can signal it. */
public class Sleeper {
    public static void main(String[] args) throws Exception {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 120;
        Thread napper = new Thread(() -> {
            try { Thread.sleep(seconds * 1000); } catch (InterruptedException e) { }
        }, "napper");
        napper.start();
        System.out.println("ready");
        System.out.flush();
        napper.join();
    }
}
