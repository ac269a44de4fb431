/*
 * Native half of java/programs/NativeStacks.java, compiled by the cstack tests (cc -shared): a JNI method
 * whose time is spent in a C function of its own, spin_in_c, so that native stacks must show spin_in_c
 * under the Java native method that called it; and one, call_back_from_c, that calls a Java method back, so
 * that native frames must show between Java ones (callIntoC → call_back_from_c → javaCallback).
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

/* Calls NativeStacks.javaCallback(seconds) back through JNI; a frame of its own, like spin_in_c. */
__attribute__((noinline)) jlong call_back_from_c(JNIEnv *env, jclass cls, jdouble seconds) {
    jmethodID callback = (*env)->GetStaticMethodID(env, cls, "javaCallback", "(D)J");
    if (callback == NULL) return 0;
    jlong h = (*env)->CallStaticLongMethod(env, cls, callback, seconds);
    /* Not a tail call: this frame stays on the stack under the callback. */
    return h ^ 1;
}

JNIEXPORT jlong JNICALL Java_NativeStacks_callIntoC(JNIEnv *env, jclass cls, jdouble seconds) {
    return call_back_from_c(env, cls, seconds) + 1;
}
