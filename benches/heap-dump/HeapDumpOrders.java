import java.io.File;
import java.util.ArrayList;
import java.util.List;

/**
 * The benchmark heap: ORDERS orders (default 1,000,000) of about 7 objects each, held by a static list.
 * Prints "ready <objects>" and waits until a file named "release" appears in the working directory.
 */
public class HeapDumpOrders {
    static final String[] SKUS = {"apple", "bread", "cheese", "dates", "eggs", "flour", "grapes", "honey"};

    static final class Item {
        final String sku;
        final int quantity;
        final double price;

        Item(String sku, int quantity, double price) {
            this.sku = sku;
            this.quantity = quantity;
            this.price = price;
        }
    }

    static final class Order {
        final long id;
        final String customer;
        final List<Item> items = new ArrayList<>(2);
        boolean shipped;

        Order(long id, String customer) {
            this.id = id;
            this.customer = customer;
        }
    }

    static List<Order> orders;

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        orders = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            Order o = new Order(i, "customer-" + (i % 100_000) + "-" + i);
            o.items.add(new Item(SKUS[i % SKUS.length], 1 + i % 5, 0.5 + i % 100));
            o.items.add(new Item(SKUS[(i + 3) % SKUS.length], 2, 9.99));
            o.shipped = i % 3 == 0;
            orders.add(o);
        }
        // Order, customer String and its byte[], ArrayList and its Object[], two Items.
        System.out.println("ready " + (7L * n));
        System.out.flush();
        File release = new File("release");
        while (!release.exists()) {
            Thread.sleep(50);
        }
        System.out.println("orders " + orders.size());
    }
}
