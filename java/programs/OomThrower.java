import java.util.ArrayList;
import java.util.List;

/** Fills the heap until an OutOfMemoryError escapes main (run it with a small -Xmx). */
public class OomThrower {
    public static void main(String[] args) {
        List<long[]> hoard = new ArrayList<>();
        System.out.println("filling");
        while (true) {
            hoard.add(new long[64 * 1024]);
        }
    }
}
