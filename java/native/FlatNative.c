/*
 * Native half of java/programs/FlatNative.java, compiled by the flat profile tests (cc -shared): a JNI method
 * that burns CPU in C, so that the profile shows native ticks against its Java frame.
 */
#include <jni.h>

JNIEXPORT jlong JNICALL Java_FlatNative_spin(JNIEnv *env, jclass cls, jlong seed, jlong iterations) {
    unsigned long long h = (unsigned long long)seed;
    (void)env;
    (void)cls;
    for (jlong i = 0; i < iterations; i++) {
        h = h * 2862933555777941757ULL + 3037000493ULL;
        h ^= h >> 31;
    }
    return (jlong)h;
}
