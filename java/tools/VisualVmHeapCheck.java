import java.io.File;
import java.util.Map;
import java.util.TreeMap;
import org.graalvm.visualvm.lib.jfluid.heap.GCRoot;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.Instance;
import org.graalvm.visualvm.lib.jfluid.heap.JavaClass;

/**
 * Loads a heap dump with VisualVM's heap library (not part of java/programs: it is compiled by the test
 * against the library's jar) and prints what VisualVM sees:
 *   class <instances> <name>     for every class with instances
 *   root <count> <kind>          GC roots by kind
 *   list <length> <head value> <head baseLong> <head c>   when the dump holds HeapDumpGraph's list
 */
public class VisualVmHeapCheck {
    public static void main(String[] args) throws Exception {
        Heap heap = HeapFactory.createHeap(new File(args[0]));
        for (JavaClass c : heap.getAllClasses()) {
            int n = c.getInstancesCount();
            if (n > 0) {
                System.out.println("class " + n + " " + c.getName());
            }
        }
        Map<String, Integer> roots = new TreeMap<>();
        for (GCRoot r : heap.getGCRoots()) {
            roots.merge(r.getKind(), 1, Integer::sum);
        }
        roots.forEach((kind, n) -> System.out.println("root " + n + " " + kind));
        JavaClass graph = heap.getJavaClassByName("HeapDumpGraph");
        if (graph != null) {
            Instance head = (Instance) graph.getValueOfStaticField("head");
            long length = 0;
            for (Instance n = head; n != null; n = (Instance) n.getValueOfField("next")) {
                length++;
            }
            System.out.println("list " + length + " " + head.getValueOfField("value") + " "
                    + head.getValueOfField("baseLong") + " " + head.getValueOfField("c"));
        }
    }
}
