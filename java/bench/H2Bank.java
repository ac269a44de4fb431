import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * A multi-threaded database workload on H2 (Debian's libh2-java, /usr/share/java/h2.jar): an in-memory bank
 * with THREADS JDBC connections (default 4) running TRANSACTIONS transfers in all (default 100,000). Each
 * transfer reads two balances, updates both and inserts a history row, in one transaction. Prints the
 * total balance (unchanged by transfers) so that a broken run shows.
 * Usage: java -cp h2.jar:. H2Bank [transactions] [threads]
 */
public class H2Bank {
    static final int ACCOUNTS = 1_000;
    static final String URL = "jdbc:h2:mem:bank;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=60000";

    public static void main(String[] args) throws Exception {
        int transactions = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        try (Connection c = DriverManager.getConnection(URL, "sa", "")) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE account(id INT PRIMARY KEY, balance BIGINT NOT NULL)");
                s.execute("CREATE TABLE history(id IDENTITY, src INT, dst INT, amount BIGINT, note VARCHAR(64))");
            }
            try (PreparedStatement p = c.prepareStatement("INSERT INTO account VALUES (?, ?)")) {
                for (int i = 0; i < ACCOUNTS; i++) {
                    p.setInt(1, i);
                    p.setLong(2, 1_000_000);
                    p.executeUpdate();
                }
            }
            List<Thread> workers = new ArrayList<>();
            List<Throwable> failures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int share = transactions / threads + (t < transactions % threads ? 1 : 0);
                long seed = 17 + t;
                Thread w = new Thread(() -> {
                    try {
                        transfers(share, seed);
                    } catch (Throwable e) {
                        synchronized (failures) {
                            failures.add(e);
                        }
                    }
                }, "jdbc-" + t);
                workers.add(w);
                w.start();
            }
            for (Thread w : workers) {
                w.join();
            }
            if (!failures.isEmpty()) {
                throw new RuntimeException("a worker failed", failures.get(0));
            }
            try (Statement s = c.createStatement();
                    ResultSet r = s.executeQuery("SELECT SUM(balance), (SELECT COUNT(*) FROM history) FROM account")) {
                r.next();
                System.out.println("total=" + r.getLong(1) + " history=" + r.getLong(2));
            }
        }
    }

    static void transfers(int n, long seed) throws SQLException {
        Random random = new Random(seed);
        try (Connection c = DriverManager.getConnection(URL, "sa", "");
                PreparedStatement read = c.prepareStatement("SELECT balance FROM account WHERE id = ?");
                PreparedStatement update = c.prepareStatement("UPDATE account SET balance = balance + ? WHERE id = ?");
                PreparedStatement log = c.prepareStatement("INSERT INTO history(src, dst, amount, note) VALUES (?, ?, ?, ?)")) {
            c.setAutoCommit(false);
            for (int i = 0; i < n; i++) {
                int src = random.nextInt(ACCOUNTS);
                int dst = (src + 1 + random.nextInt(ACCOUNTS - 1)) % ACCOUNTS;
                long amount = 1 + random.nextInt(100);
                try {
                    read.setInt(1, src);
                    long balance;
                    try (ResultSet r = read.executeQuery()) {
                        r.next();
                        balance = r.getLong(1);
                    }
                    if (balance < amount) {
                        c.rollback();
                        continue;
                    }
                    update.setLong(1, -amount);
                    update.setInt(2, src);
                    update.executeUpdate();
                    update.setLong(1, amount);
                    update.setInt(2, dst);
                    update.executeUpdate();
                    log.setInt(1, src);
                    log.setInt(2, dst);
                    log.setLong(3, amount);
                    log.setString(4, "transfer " + i + " of " + Thread.currentThread().getName());
                    log.executeUpdate();
                    c.commit();
                } catch (SQLException e) {
                    // Two transfers touching the same account: H2 reports the conflict; try another.
                    c.rollback();
                }
            }
        }
    }
}
