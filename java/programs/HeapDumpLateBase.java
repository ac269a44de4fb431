/** Loaded (not linked) by HeapDumpLateClasses's loaders long before its subclass, as javac loads superclasses. */
public class HeapDumpLateBase {
    public int a = 7;
    public Object base = "base";
    public long c = 0x1122334455667788L;
}
