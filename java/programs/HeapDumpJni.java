import java.io.File;
import java.util.concurrent.CountDownLatch;

/**
 * Objects held only by JNI local references (java/native/HeapDumpJni.c, loaded from the path given as the
 * first argument): a JniHeld passed to a native method that calls back into Java and waits, and a
 * NativeHeld that a native thread with no Java frame keeps. Prints "ready" once both are held, then waits
 * until a file named "release" appears.
 */
public class HeapDumpJni {
    static class JniHeld {
        final int mark = 1;
    }

    static class NativeHeld {
        final int mark = 2;
    }

    static final CountDownLatch NATIVE_READY = new CountDownLatch(1);

    static native void startNativeHolder();

    static native void holdWhileWaiting(Object held);

    static native void releaseNativeHolder();

    /** Called by the native thread once it holds its object. */
    static void nativeHolderReady() {
        NATIVE_READY.countDown();
    }

    /** Called by holdWhileWaiting, whose frame holds the JniHeld. */
    static void waitForRelease() throws Exception {
        System.out.println("ready");
        System.out.flush();
        File release = new File("release");
        while (!release.exists()) {
            Thread.sleep(20);
        }
    }

    public static void main(String[] args) throws Exception {
        System.load(args[0]);
        startNativeHolder();
        NATIVE_READY.await();
        holdWhileWaiting(new JniHeld());
        releaseNativeHolder();
        System.out.println("done");
    }
}
