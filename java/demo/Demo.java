import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The bundled demo: a little order-processing program with a CPU-heavy part (pricing with hashing and
 * sorting), an allocation-heavy part (orders, line items, strings) and a lock that its workers contend for.
 * `make demo` profiles it and prints the report.
 */
public class Demo {
    static final class LineItem {
        final String sku;
        final int quantity;
        final long priceCents;
        LineItem(String sku, int quantity, long priceCents) {
            this.sku = sku;
            this.quantity = quantity;
            this.priceCents = priceCents;
        }
    }

    static final class Order {
        final long id;
        final List<LineItem> items = new ArrayList<>();
        Order(long id) { this.id = id; }
    }

    static final Object LEDGER_LOCK = new Object();
    static final Map<String, Long> LEDGER = new HashMap<>();
    static final List<Order> ARCHIVE = new ArrayList<>();

    static Order makeOrder(Random r, long id) {
        Order o = new Order(id);
        int n = 1 + r.nextInt(5);
        for (int i = 0; i < n; i++) {
            o.items.add(new LineItem("SKU-" + r.nextInt(1000), 1 + r.nextInt(3), 100 + r.nextInt(10_000)));
        }
        return o;
    }

    /** CPU-heavy: a deliberately expensive price check. */
    static long priceOrder(Order o) {
        long total = 0;
        for (LineItem li : o.items) {
            long h = li.sku.hashCode();
            for (int k = 0; k < 2_000; k++) {
                h = h * 6364136223846793005L + 1442695040888963407L;
            }
            total += li.priceCents * li.quantity + (h & 1);
        }
        return total;
    }

    static void record(Order o, long cents) {
        synchronized (LEDGER_LOCK) {
            LEDGER.merge("customer-" + (o.id % 50), cents, Long::sum);
            if (o.id % 10 == 0) {
                ARCHIVE.add(o);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int workers = 3;
        int ordersPerWorker = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            final int seed = w;
            Thread t = new Thread(() -> {
                Random r = new Random(seed);
                for (int i = 0; i < ordersPerWorker; i++) {
                    Order o = makeOrder(r, (long) seed * ordersPerWorker + i);
                    record(o, priceOrder(o));
                }
            }, "order-worker-" + w);
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        long sum = LEDGER.values().stream().mapToLong(Long::longValue).sum();
        System.out.println("processed " + workers * ordersPerWorker + " orders, " + ARCHIVE.size()
            + " archived, ledger total " + sum);
    }
}
