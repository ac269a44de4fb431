/** Keeps N small objects reachable (default 2,000,000), for the agent's memory cost per tracked object. */
public class KeepMany {
    static final class Item {
        int value;
    }

    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 2_000_000;
        Item[] items = new Item[n];
        for (int i = 0; i < n; i++) {
            items[i] = new Item();
            items[i].value = i;
        }
        System.gc();
        System.out.println("kept=" + items.length);
    }
}
