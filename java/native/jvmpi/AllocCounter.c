/*
 * A JVMPI agent that only counts OBJECT_ALLOC events (and their bytes), for the layer's allocation cost
 * (benches/jvmpi). Prints at shutdown:
 *
 *   ALLOCS objects=N bytes=B
 */
#include <jvmpi.h>
#include <stdio.h>

static JVMPI_Interface *jvmpi;
static volatile long objects, bytes;

static void JNICALL on_event(JVMPI_Event *e) {
    switch (e->event_type) {
    case JVMPI_EVENT_OBJECT_ALLOC:
        __atomic_fetch_add(&objects, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&bytes, e->u.obj_alloc.size, __ATOMIC_RELAXED);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        printf("ALLOCS objects=%ld bytes=%ld\n", objects, bytes);
        fflush(stdout);
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved) {
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) < 0) return JNI_ERR;
    jvmpi->NotifyEvent = on_event;
    jvmpi->EnableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
    return JNI_OK;
}
