/** Loaded by JvmpiEvents through a class loader of its own and unloaded with it (CLASS_UNLOAD). */
public class JvmpiUnloadPayload {
    public int value = 42;
}
