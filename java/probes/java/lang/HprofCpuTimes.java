package java.lang;

/**
 * cpu=times' probes, counting in Java: every instrumented method calls {@link #enter} and {@link #exit}
 * with its id; the JIT inlines them into the caller, so a call costs no JNI transition.
 *
 * <p>Compiled to {@code crates/hprof-agent/src/capabilities/cpu_times/HprofCpuTimes.class} by
 * {@code scripts/probe-class.sh}; the agent defines it in the boot loader (so that it belongs to java.base,
 * which every module reads) and starts it with {@link #start}.
 *
 * <p>Each thread (on JDK 19+ each carrier thread, as the JNI probes kept it) owns one instance: a
 * calling-context tree in flat arrays (node = one method called from its parent node: exact calls and
 * self time) and the shadow stack of running nodes. Instances are found by the thread's identity hash in
 * an open-addressed table, replaced whole (copy on write) when a thread is added, so probes read it
 * without a lock.
 *
 * <p>Rules that keep the probes sound: the code here calls nothing but native methods (Thread.currentThread,
 * System.nanoTime, System.identityHashCode, System.arraycopy, Object.clone and the agent's two natives),
 * because every Java method of any other class carries probes and would re-enter them halfway through an
 * update; it never allocates on the hot path (arrays double when full); it never constructs an instance
 * (a constructor runs Object.&lt;init&gt;, which carries probes) but clones the template.
 *
 * <p>Time: each probe reads System.nanoTime once and credits the gap since the previous probe to the node on
 * top of the shadow stack. Every ~0.5 ms (half to one and a half, drawn at random so that segments cannot
 * fall into step with the program's calls) a probe reads the thread's CPU clock (the agent's native) and
 * converts the segment's nanoseconds into CPU time in proportion, so time spent waiting or descheduled is
 * spread over the segment's methods instead of charged to whichever method was on top.
 */
public final class HprofCpuTimes implements Cloneable {
    /** Probes record: set by {@link #start}, cleared by {@link #stop}. */
    private static volatile boolean ready;
    /** Key threads by their carrier (JDK 19+): virtual threads share their carrier's tree, as with JNI. */
    private static boolean byCarrier;
    /** The segments' mean length, wall nanoseconds. */
    private static long segmentNs = 500_000;

    /** Thread keys and their instances, interleaved; length a power of two. */
    private static Object[] table = new Object[64];
    private static int tableUsed;
    /** Every instance ever made, for dumps (ended threads' calls count). */
    private static HprofCpuTimes[] all = new HprofCpuTimes[16];
    private static int allCount;
    private static final HprofCpuTimes TEMPLATE = new HprofCpuTimes();

    private int serial;
    // The tree: node 0 is the root (no method); method ids start at 1.
    private int nodes;
    private int[] parent;
    private int[] method;
    private long[] calls;
    /** Wall ns credited in the open segment. */
    private long[] pending;
    /** Converted CPU ns. */
    private double[] self;
    /** The last method called from a node and the child it gave: loops call the same callee again. */
    private int[] cacheMethod;
    private int[] cacheChild;
    /** (parent << 32 | method) → child + 1, open addressing. */
    private long[] childKeys;
    private int[] childValues;
    private int childUsed;
    /** stack[0] is the root; stack[1..depth] the running nodes. */
    private int[] stack;
    private int depth;
    /** Nodes with pending time in the open segment. */
    private int[] touched;
    private int touchedCount;
    private long last;
    private long segmentStart;
    private long segmentCpu;
    private long segmentLimit;
    private double lastRate;
    private long rng;

    private HprofCpuTimes() {}

    /** The thread's CPU clock, ns (the agent's native). */
    private static native long cpuNow();

    /** The thread's serial for thread=y traces, 0 without (the agent's native). */
    private static native int threadSerial();

    public static void enter(int id) {
        if (!ready) {
            return;
        }
        HprofCpuTimes p = current();
        if (p != null) {
            p.enterAt(id, System.nanoTime());
        }
    }

    public static void exit(int id) {
        if (!ready) {
            return;
        }
        HprofCpuTimes p = current();
        if (p != null) {
            p.exitAt(id, System.nanoTime());
        }
    }

    private static HprofCpuTimes current() {
        Thread t = byCarrier ? Thread.currentCarrierThread() : Thread.currentThread();
        Object[] tab = table;
        int mask = tab.length - 2;
        int i = (System.identityHashCode(t) << 1) & mask;
        while (true) {
            Object k = tab[i];
            if (k == t) {
                return (HprofCpuTimes) tab[i + 1];
            }
            if (k == null) {
                return add(t);
            }
            i = (i + 2) & mask;
        }
    }

    private void enterAt(int id, long now) {
        int top = stack[depth];
        credit(top, now);
        int child = cacheMethod[top] == id ? cacheChild[top] : child(top, id);
        calls[child]++;
        int d = depth + 1;
        if (d == stack.length) {
            growStack();
        }
        stack[d] = child;
        depth = d;
        if (now - segmentStart > segmentLimit) {
            closeSegment(now);
        } else {
            last = now;
        }
    }

    private void exitAt(int id, long now) {
        int top = stack[depth];
        credit(top, now);
        if (method[top] == id && depth > 0) {
            depth--;
        } else {
            unwindTo(id);
        }
        if (now - segmentStart > segmentLimit) {
            closeSegment(now);
        } else {
            last = now;
        }
    }

    private void credit(int node, long now) {
        long gap = now - last;
        if (gap > 0) {
            if (pending[node] == 0) {
                touch(node);
            }
            pending[node] += gap;
        }
    }

    /**
     * An exit whose method is not on top: exits were missed (an exception out of a constructor's super()
     * call, or a virtual thread moved). Pops down to the method if it is among the top 64 frames.
     */
    private void unwindTo(int id) {
        int low = depth > 64 ? depth - 64 : 1;
        for (int k = depth; k >= low; k--) {
            if (method[stack[k]] == id) {
                depth = k - 1;
                return;
            }
        }
    }

    private void touch(int node) {
        if (touchedCount == touched.length) {
            touched = grow(touched);
        }
        touched[touchedCount++] = node;
    }

    private void closeSegment(long now) {
        long cpu = cpuNow();
        long span = now - segmentStart;
        if (span < 1) {
            span = 1;
        }
        double rate = (double) (cpu - segmentCpu) / (double) span;
        for (int i = 0; i < touchedCount; i++) {
            int n = touched[i];
            self[n] += (double) pending[n] * rate;
            pending[n] = 0;
        }
        touchedCount = 0;
        lastRate = rate;
        segmentCpu = cpu;
        // xorshift64
        rng ^= rng << 13;
        rng ^= rng >>> 7;
        rng ^= rng << 17;
        long s = segmentNs;
        segmentLimit = s / 2 + (rng >>> 1) % s;
        // The clock reads are the probe's, not the method's.
        last = System.nanoTime();
        segmentStart = last;
    }

    /** The child of `parent` for method `id`, made on its first call. */
    private int child(int parentNode, int id) {
        long key = ((long) parentNode << 32) | (id & 0xffffffffL);
        long[] keys = childKeys;
        int mask = keys.length - 1;
        int i = mix(key) & mask;
        while (true) {
            int v = childValues[i];
            if (v == 0) {
                break;
            }
            if (keys[i] == key) {
                cacheMethod[parentNode] = id;
                cacheChild[parentNode] = v - 1;
                return v - 1;
            }
            i = (i + 1) & mask;
        }
        int n = nodes;
        if (n == parent.length) {
            growNodes();
        }
        parent[n] = parentNode;
        method[n] = id;
        nodes = n + 1;
        if ((childUsed + 1) * 2 > keys.length) {
            growChildren();
            keys = childKeys;
            mask = keys.length - 1;
            i = mix(key) & mask;
            while (childValues[i] != 0) {
                i = (i + 1) & mask;
            }
        }
        keys[i] = key;
        childValues[i] = n + 1;
        childUsed++;
        cacheMethod[parentNode] = id;
        cacheChild[parentNode] = n;
        return n;
    }

    private static int mix(long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h >>> 32);
    }

    private void growNodes() {
        parent = grow(parent);
        method = grow(method);
        cacheMethod = grow(cacheMethod);
        cacheChild = grow(cacheChild);
        calls = grow(calls);
        pending = grow(pending);
        double[] s = new double[self.length * 2];
        System.arraycopy(self, 0, s, 0, self.length);
        self = s;
    }

    private void growChildren() {
        long[] oldKeys = childKeys;
        int[] oldValues = childValues;
        long[] keys = new long[oldKeys.length * 2];
        int[] values = new int[oldKeys.length * 2];
        int mask = keys.length - 1;
        for (int j = 0; j < oldKeys.length; j++) {
            if (oldValues[j] != 0) {
                int i = mix(oldKeys[j]) & mask;
                while (values[i] != 0) {
                    i = (i + 1) & mask;
                }
                keys[i] = oldKeys[j];
                values[i] = oldValues[j];
            }
        }
        childKeys = keys;
        childValues = values;
    }

    private void growStack() {
        stack = grow(stack);
    }

    private static int[] grow(int[] a) {
        int[] b = new int[a.length * 2];
        System.arraycopy(a, 0, b, 0, a.length);
        return b;
    }

    private static long[] grow(long[] a) {
        long[] b = new long[a.length * 2];
        System.arraycopy(a, 0, b, 0, a.length);
        return b;
    }

    /** The thread's first probe: its instance, made and published. */
    private static HprofCpuTimes add(Thread t) {
        synchronized (HprofCpuTimes.class) {
            Object[] tab = table;
            int mask = tab.length - 2;
            int i = (System.identityHashCode(t) << 1) & mask;
            while (tab[i] != null) {
                if (tab[i] == t) {
                    return (HprofCpuTimes) tab[i + 1];
                }
                i = (i + 2) & mask;
            }
            HprofCpuTimes p;
            try {
                p = (HprofCpuTimes) TEMPLATE.clone();
            } catch (CloneNotSupportedException e) {
                return null;
            }
            p.init();
            // Copy on write: probes of other threads go on reading the table they hold.
            Object[] next = new Object[(tableUsed + 1) * 4 > tab.length ? tab.length * 2 : tab.length];
            int nextMask = next.length - 2;
            for (int j = 0; j < tab.length; j += 2) {
                if (tab[j] != null) {
                    int k = (System.identityHashCode(tab[j]) << 1) & nextMask;
                    while (next[k] != null) {
                        k = (k + 2) & nextMask;
                    }
                    next[k] = tab[j];
                    next[k + 1] = tab[j + 1];
                }
            }
            int k = (System.identityHashCode(t) << 1) & nextMask;
            while (next[k] != null) {
                k = (k + 2) & nextMask;
            }
            next[k] = t;
            next[k + 1] = p;
            if (allCount == all.length) {
                HprofCpuTimes[] a = new HprofCpuTimes[all.length * 2];
                System.arraycopy(all, 0, a, 0, all.length);
                all = a;
            }
            all[allCount++] = p;
            tableUsed++;
            table = next;
            return p;
        }
    }

    private void init() {
        int n = 64;
        parent = new int[n];
        method = new int[n];
        cacheMethod = new int[n];
        cacheChild = new int[n];
        calls = new long[n];
        pending = new long[n];
        self = new double[n];
        nodes = 1;
        childKeys = new long[2 * n];
        childValues = new int[2 * n];
        childUsed = 0;
        stack = new int[64];
        depth = 0;
        touched = new int[64];
        touchedCount = 0;
        serial = threadSerial();
        segmentCpu = cpuNow();
        last = System.nanoTime();
        segmentStart = last;
        segmentLimit = segmentNs;
        lastRate = 1.0;
        rng = last | 1;
    }

    /** Called by the agent once the natives are bound: from now on probes record. */
    static void start(long segment, boolean carrier) {
        segmentNs = segment > 1 ? segment : 2;
        byCarrier = carrier;
        ready = true;
    }

    /** Called by the agent when a session ends before the JVM: running probes record no more. */
    static void stop() {
        ready = false;
    }

    /**
     * Every thread's tree, for a dump: [threads, then per thread: serial, nodes, then per node (from 1):
     * parent, method, calls, self CPU ns]. Read while the threads run: a node being added may be cut off.
     */
    static long[] snapshot() {
        HprofCpuTimes[] ps;
        int count;
        synchronized (HprofCpuTimes.class) {
            ps = all;
            count = allCount;
        }
        int size = 1;
        int[] ns = new int[count];
        for (int i = 0; i < count; i++) {
            HprofCpuTimes p = ps[i];
            int n = p.nodes;
            n = n < p.parent.length ? n : p.parent.length;
            n = n < p.calls.length ? n : p.calls.length;
            n = n < p.self.length ? n : p.self.length;
            n = n < p.pending.length ? n : p.pending.length;
            ns[i] = n;
            size += 2 + 4 * (n > 0 ? n - 1 : 0);
        }
        long[] out = new long[size];
        int o = 0;
        out[o++] = count;
        for (int i = 0; i < count; i++) {
            HprofCpuTimes p = ps[i];
            int[] parentOf = p.parent;
            int[] methodOf = p.method;
            long[] callsOf = p.calls;
            double[] selfOf = p.self;
            long[] pendingOf = p.pending;
            double rate = p.lastRate;
            int n = ns[i];
            out[o++] = p.serial;
            out[o++] = n > 0 ? n - 1 : 0;
            for (int j = 1; j < n; j++) {
                out[o++] = parentOf[j];
                out[o++] = methodOf[j];
                out[o++] = callsOf[j];
                double s = selfOf[j] + (double) pendingOf[j] * rate;
                out[o++] = s > 0 ? (long) s : 0;
            }
        }
        return out;
    }
}
