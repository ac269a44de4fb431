import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;

/**
 * A large heap for the front-end benchmark: a HashMap of N Integer → String entries (four objects each:
 * node, key, value, and the value's byte[]) plus a list of N/4 small records. Prints "ready" and waits to
 * be dumped. Args: N (default 2_000_000).
 */
public class BigHeap {
    record Item(long id, String name, Item parent) {}

    static HashMap<Integer, String> MAP;
    static List<Item> ITEMS;

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 2_000_000;
        MAP = new HashMap<>();
        for (int i = 0; i < n; i++) {
            MAP.put(i, "value-" + i);
        }
        ITEMS = new ArrayList<>();
        Item prev = null;
        for (int i = 0; i < n / 4; i++) {
            prev = new Item(i, i % 16 == 0 ? "item-" + i : null, i % 1000 == 0 ? null : prev);
            ITEMS.add(prev);
        }
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(600_000);
    }
}
