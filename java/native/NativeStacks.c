/*
 * Native half of java/programs/NativeStacks.java, compiled by the cstack tests (cc -shared): a JNI method
 * whose time is spent in a C function of its own, spin_in_c, so that native stacks must show spin_in_c
 * under the Java native method that called it.
 */
#include <jni.h>
#include <time.h>

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* Not inlined and exported, so that it is a frame and a symbol of its own. */
__attribute__((noinline)) unsigned long long spin_in_c(double seconds) {
    unsigned long long h = 1469598103934665603ULL;
    double end = now_seconds() + seconds;
    while (now_seconds() < end) {
        for (int i = 0; i < 100000; i++) {
            h = h * 2862933555777941757ULL + 3037000493ULL;
            h ^= h >> 31;
        }
    }
    return h;
}

JNIEXPORT jlong JNICALL Java_NativeStacks_spinInC(JNIEnv *env, jclass cls, jdouble seconds) {
    (void)env;
    (void)cls;
    return (jlong)spin_in_c(seconds);
}
