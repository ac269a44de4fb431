/** Says hello from main and from one worker thread, then exits normally. */
public class Hello {
    public static void main(String[] args) throws Exception {
        Thread worker = new Thread(() -> System.out.println("hello from worker"), "hello-worker");
        worker.start();
        worker.join();
        String[][] grid = new String[2][3];
        grid[1][2] = "x";
        System.out.println("Hello " + grid[1][2]);
    }
}
