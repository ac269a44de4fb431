/*
 * A JVMPI agent that counts OBJECT_ALLOC events (and their bytes), for the layer's allocation cost
 * (benches/jvmpi). With a class name as its options (`-XrunAllocCounter:JvmpiAllocThreads$Item`) it also
 * enables CLASS_LOAD, counts that class's instances and checks that no two of them got the same ID.
 * Prints at shutdown:
 *
 *   ALLOCS objects=N bytes=B
 *   TARGET allocs=N duplicate_ids=D            (with a class name)
 */
#include <jvmpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ID_SLOTS (1 << 21)

static JVMPI_Interface *jvmpi;
static volatile long objects, bytes;
static char target_name[256];
static jobjectID volatile target_class;
static long target_allocs, duplicate_ids;
static jobjectID *ids;
static pthread_mutex_t ids_lock = PTHREAD_MUTEX_INITIALIZER;

/* Records a target instance's ID; counts it as a duplicate if another had it. */
static void record_id(jobjectID id) {
    size_t i = ((size_t)id * 0x9E3779B97F4A7C15ull) >> 43;
    pthread_mutex_lock(&ids_lock);
    target_allocs++;
    for (;; i = (i + 1) & (ID_SLOTS - 1)) {
        if (ids[i] == NULL) {
            ids[i] = id;
            break;
        }
        if (ids[i] == id) {
            duplicate_ids++;
            break;
        }
    }
    pthread_mutex_unlock(&ids_lock);
}

static void JNICALL on_event(JVMPI_Event *e) {
    switch (e->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
        if (target_name[0] && strcmp(e->u.class_load.class_name, target_name) == 0)
            target_class = e->u.class_load.class_id;
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        __atomic_fetch_add(&objects, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&bytes, e->u.obj_alloc.size, __ATOMIC_RELAXED);
        /* An object array names its element class: only instances count. */
        if (target_class && e->u.obj_alloc.class_id == target_class && e->u.obj_alloc.is_array == JVMPI_NORMAL_OBJECT)
            record_id(e->u.obj_alloc.obj_id);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        printf("ALLOCS objects=%ld bytes=%ld\n", objects, bytes);
        if (target_name[0]) printf("TARGET allocs=%ld duplicate_ids=%ld\n", target_allocs, duplicate_ids);
        fflush(stdout);
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved) {
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) < 0) return JNI_ERR;
    jvmpi->NotifyEvent = on_event;
    if (options && options[0]) {
        snprintf(target_name, sizeof target_name, "%s", options);
        ids = calloc(ID_SLOTS, sizeof *ids);
        if (!ids) return JNI_ERR;
        jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
    }
    jvmpi->EnableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
    return JNI_OK;
}
