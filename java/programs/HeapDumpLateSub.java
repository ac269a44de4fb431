/** Loaded, linked and instantiated by HeapDumpLateClasses's loaders after its superclass was loaded. */
public class HeapDumpLateSub extends HeapDumpLateBase implements Runnable {
    public static int made = 5;
    public int d = 11;
    public Object self = this;

    @Override
    public void run() {}
}
