import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A heap that grows by a known amount, for `hprof diff`: holds 1000 Growth$Item (16 bytes each with
 * compressed oops: header 12 + int 4), prints "step1", waits for a file named "next" in the working
 * directory, adds 5000 more, prints "step2" and sleeps until killed.
 */
public class Growth {
    static final class Item {
        int value;
    }

    static final List<Item> ITEMS = new ArrayList<>();

    static void add(int n) {
        for (int i = 0; i < n; i++) {
            Item it = new Item();
            it.value = i;
            ITEMS.add(it);
        }
    }

    public static void main(String[] args) throws Exception {
        add(1000);
        System.out.println("step1");
        System.out.flush();
        while (!Files.exists(Path.of("next"))) {
            Thread.sleep(20);
        }
        add(5000);
        System.out.println("step2");
        System.out.flush();
        Thread.sleep(600_000);
    }
}
