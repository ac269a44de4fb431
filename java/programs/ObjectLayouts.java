/**
 * Objects whose sizes depend on how the VM lays fields out, for comparing `hprof histo` with
 * `jcmd GC.class_histogram` under every object layout (compressed oops or not, compact headers, ZGC):
 * small class hierarchies where a subclass's fields fit into its superclass's gaps, every field type,
 * empty classes, and arrays of every type with lengths 0, 1 and odd. Each class has a count of its own
 * (13, 17, 19, ...), so a row in a histogram can only come from it. Prints "ready" and waits to be killed.
 */
public class ObjectLayouts {
    static class Empty {}
    static class EmptyChild extends Empty {}

    static class OneByte { byte b; }
    static class ByteThenByte extends OneByte { byte c; }
    static class ByteThenInt extends OneByte { int i; }
    static class ByteThenLong extends OneByte { long l; }

    static class OneShort { short s; }
    static class OneChar { char c; }
    static class OneInt { int i; }
    static class IntThenShortChar extends OneInt { short s; char c; }

    static class OneLong { long l; }
    static class LongThenByte extends OneLong { byte b; }
    static class LongThenInt extends LongThenByte { int i; }

    static class OneDouble { double d; }
    static class DoubleAndRef extends OneDouble { Object r; }

    static class OneRef { Object r; }
    static class RefThenRef extends OneRef { Object s; }
    static class RefThenBool extends OneRef { boolean z; }

    static class Mixed {
        byte b; short s; char c; int i; long l; float f; double d; boolean z; Object r; Object[] a;
    }
    static class MixedChild extends Mixed { byte b2; int i2; Object r2; }
    static class MixedGrandChild extends MixedChild { long l2; short s2; }

    static class ThreeBytes { byte a, b, c; }
    static class ThreeBytesThenLong extends ThreeBytes { long l; }
    static class FiveInts { int a, b, c, d, e; }
    static class FiveIntsThenRef extends FiveInts { Object r; }

    static class Statics {
        static long SL = 1; static int SI = 2; static byte SB = 3; static Object SR = "s";
        int x;
    }

    static Object[] KEEP;

    static <T> void add(java.util.List<Object> keep, int n, java.util.function.Supplier<T> make) {
        for (int i = 0; i < n; i++) {
            keep.add(make.get());
        }
    }

    public static void main(String[] args) throws Exception {
        java.util.List<Object> keep = new java.util.ArrayList<>();
        add(keep, 13, Empty::new);
        add(keep, 17, EmptyChild::new);
        add(keep, 19, OneByte::new);
        add(keep, 23, ByteThenByte::new);
        add(keep, 29, ByteThenInt::new);
        add(keep, 31, ByteThenLong::new);
        add(keep, 37, OneShort::new);
        add(keep, 41, OneChar::new);
        add(keep, 43, OneInt::new);
        add(keep, 47, IntThenShortChar::new);
        add(keep, 53, OneLong::new);
        add(keep, 59, LongThenByte::new);
        add(keep, 61, LongThenInt::new);
        add(keep, 67, OneDouble::new);
        add(keep, 71, DoubleAndRef::new);
        add(keep, 73, OneRef::new);
        add(keep, 79, RefThenRef::new);
        add(keep, 83, RefThenBool::new);
        add(keep, 89, Mixed::new);
        add(keep, 97, MixedChild::new);
        add(keep, 101, MixedGrandChild::new);
        add(keep, 103, ThreeBytes::new);
        add(keep, 107, ThreeBytesThenLong::new);
        add(keep, 109, FiveInts::new);
        add(keep, 113, FiveIntsThenRef::new);
        add(keep, 127, Statics::new);
        // Arrays of each type, lengths 0, 1, 3, 5 and 7, under classes of their own where the type allows.
        for (int len : new int[] {0, 1, 3, 5, 7}) {
            for (int k = 0; k < 3; k++) {
                keep.add(new boolean[len]);
                keep.add(new byte[len]);
                keep.add(new short[len]);
                keep.add(new char[len]);
                keep.add(new int[len]);
                keep.add(new float[len]);
                keep.add(new long[len]);
                keep.add(new double[len]);
                keep.add(new OneByte[len]);
                keep.add(new Mixed[len][]);
            }
        }
        KEEP = keep.toArray();
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(600_000);
    }
}
