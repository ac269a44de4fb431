import java.lang.reflect.Constructor;

/**
 * Four threads allocate at once: each makes 50,000 {@code Item}s with {@code new} and 100 by reflection
 * (which the VM allocates itself, so JVMTI reports them twice), keeping every tenth. 200,400 Items in all.
 */
public class JvmpiAllocThreads {
    static final class Item {
        final int value;

        public Item(int value) {
            this.value = value;
        }
    }

    static final int THREADS = 4;
    static final int PER_THREAD = 50_000;
    static final int REFLECTED = 100;

    public static void main(String[] args) throws Exception {
        Constructor<Item> make = Item.class.getConstructor(int.class);
        Item[][] kept = new Item[THREADS][];
        Thread[] threads = new Thread[THREADS];
        for (int t = 0; t < THREADS; t++) {
            int me = t;
            threads[t] = new Thread(() -> {
                Item[] mine = new Item[PER_THREAD / 10 + REFLECTED];
                for (int i = 0; i < PER_THREAD; i++) {
                    Item item = new Item(i);
                    if (i % 10 == 0) {
                        mine[i / 10] = item;
                    }
                }
                try {
                    for (int i = 0; i < REFLECTED; i++) {
                        mine[PER_THREAD / 10 + i] = make.newInstance(i);
                    }
                } catch (ReflectiveOperationException e) {
                    throw new RuntimeException(e);
                }
                kept[me] = mine;
            }, "alloc-" + t);
        }
        for (Thread t : threads) {
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        long n = 0;
        for (Item[] mine : kept) {
            n += mine.length;
        }
        System.out.println("kept=" + n);
    }
}
