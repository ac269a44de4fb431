import java.lang.reflect.Array;
import java.util.Arrays;

/**
 * The allocation paths besides {@code new} that heap=sites must count exactly: {@code multianewarray} (an
 * outer array and its inner ones from one instruction), {@code Object.clone}, {@code Array.newInstance} and
 * {@code Arrays.copyOf} — each run hot enough for the JIT, whose intrinsics allocate these inline without
 * running the Java or native code behind them. Every object escapes into a static field.
 *
 * <p>Counts: 1,000 {@code Grid[][]} with 3,000 {@code Grid[]} inside; 200,001 {@code Sheep} (one made with
 * {@code new}, the rest cloned); 200,000 {@code Slot[]} made by {@code Array.newInstance}; 200,000
 * {@code Copy[]} made by {@code Arrays.copyOf} (and 1 with {@code new}).
 */
public class AllocPaths {
    static final class Grid {}

    static final class Slot {}

    static final class Copy {}

    static final class Sheep implements Cloneable {
        int wool;

        @Override
        public Sheep clone() {
            try {
                return (Sheep) super.clone();
            } catch (CloneNotSupportedException e) {
                throw new AssertionError(e);
            }
        }
    }

    static volatile Object sink;

    public static void main(String[] args) {
        for (int i = 0; i < 1_000; i++) {
            sink = new Grid[3][4];
        }
        Sheep dolly = new Sheep();
        for (int i = 0; i < 200_000; i++) {
            sink = dolly.clone();
        }
        for (int i = 0; i < 200_000; i++) {
            sink = Array.newInstance(Slot.class, 2);
        }
        Copy[] original = new Copy[3];
        for (int i = 0; i < 200_000; i++) {
            sink = Arrays.copyOf(original, 4);
        }
        System.out.println("done");
    }
}
