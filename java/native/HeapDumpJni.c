/*
 * Native half of java/programs/HeapDumpJni.java, compiled by the heap dump tests (gcc -shared): objects
 * held only by JNI local references, in a native method's frame and on a native thread with no Java frame.
 */
#include <jni.h>
#include <pthread.h>
#include <unistd.h>

static JavaVM *vm;
static volatile int released;

static void *hold_on_native_thread(void *unused) {
    JNIEnv *env;
    JavaVMAttachArgs args = {JNI_VERSION_1_8, "native-holder", NULL};
    (void)unused;
    if ((*vm)->AttachCurrentThreadAsDaemon(vm, (void **)&env, &args) != JNI_OK) {
        return NULL;
    }
    jclass main_class = (*env)->FindClass(env, "HeapDumpJni");
    jclass held_class = (*env)->FindClass(env, "HeapDumpJni$NativeHeld");
    jmethodID init = (*env)->GetMethodID(env, held_class, "<init>", "()V");
    jobject held = (*env)->NewObject(env, held_class, init); /* a local reference, and the only one */
    jmethodID ready = (*env)->GetStaticMethodID(env, main_class, "nativeHolderReady", "()V");
    (*env)->CallStaticVoidMethod(env, main_class, ready);
    while (!released) {
        usleep(10000);
    }
    (*env)->DeleteLocalRef(env, held);
    (*vm)->DetachCurrentThread(vm);
    return NULL;
}

JNIEXPORT void JNICALL Java_HeapDumpJni_startNativeHolder(JNIEnv *env, jclass cls) {
    pthread_t thread;
    (void)cls;
    (*env)->GetJavaVM(env, &vm);
    if (pthread_create(&thread, NULL, hold_on_native_thread, NULL) == 0) {
        pthread_detach(thread);
    }
}

JNIEXPORT void JNICALL Java_HeapDumpJni_holdWhileWaiting(JNIEnv *env, jclass cls, jobject held) {
    jobject local = (*env)->NewLocalRef(env, held);
    jmethodID wait = (*env)->GetStaticMethodID(env, cls, "waitForRelease", "()V");
    (*env)->CallStaticVoidMethod(env, cls, wait);
    (*env)->DeleteLocalRef(env, local);
}

JNIEXPORT void JNICALL Java_HeapDumpJni_releaseNativeHolder(JNIEnv *env, jclass cls) {
    (void)env;
    (void)cls;
    released = 1;
}
