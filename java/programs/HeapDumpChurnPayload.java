/** Defined again and again by HeapDumpClassChurn, each time by a new class loader. */
public class HeapDumpChurnPayload {
    public static int created;
    public int n = 7;
    public Object self = this;

    public HeapDumpChurnPayload() {
        created++;
    }
}
