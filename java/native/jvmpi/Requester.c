/*
 * A JVMPI agent that learns classes and threads only on demand (RequestEvent), as the specification allows
 * when the defining events are off. It enables OBJECT_ALLOC alone; on an allocation of a class it does not
 * know it requests the class's CLASS_LOAD, and on an event from a thread it does not know, the thread's
 * THREAD_START (through GetThreadObject). Requested events must arrive on the requesting thread, before
 * RequestEvent returns, with JVMPI_REQUESTED_EVENT set. At shutdown it re-requests the first allocation of
 * the class named by its option and prints:
 *
 *   REQUESTS classes=N threads=T
 *   COUNT <class> <instances>            (for the class named by the option)
 *   REALLOC same_id=1 same_class=1 same_size=1 requested=1
 *   NOT_AVAILABLE method_entry=1
 *   ERROR ...
 */
#include <jvmpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static JVMPI_Interface *jvmpi;
static char target[256];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* What a requested event delivered, per thread (requests are answered on the requesting thread). */
static __thread int got_requested;
static __thread JVMPI_Event last_requested;
static __thread char last_name[256];

#define MAX 16384
static jobjectID class_ids[MAX];
static char *class_names[MAX];
static int num_classes;
static JNIEnv *threads[1024];
static int num_threads;
static long target_count;
static jobjectID target_class, first_target_obj;
static jint first_target_size;

static int known_class(jobjectID id) {
    for (int i = 0; i < num_classes; i++)
        if (class_ids[i] == id) return i;
    return -1;
}

static int known_thread(JNIEnv *env) {
    for (int i = 0; i < num_threads; i++)
        if (threads[i] == env) return 1;
    return 0;
}

static void on_alloc(JVMPI_Event *e) {
    jobjectID cid = e->u.obj_alloc.class_id;
    pthread_mutex_lock(&lock);
    int thread_known = known_thread(e->env_id);
    int c = cid ? known_class(cid) : -2;
    pthread_mutex_unlock(&lock);
    if (!thread_known) {
        jobjectID t = jvmpi->GetThreadObject(e->env_id);
        got_requested = 0;
        if (jvmpi->RequestEvent(JVMPI_EVENT_THREAD_START, t) != JVMPI_SUCCESS || !got_requested)
            printf("ERROR THREAD_START request not answered on this thread\n");
        pthread_mutex_lock(&lock);
        if (!known_thread(e->env_id) && num_threads < 1024) threads[num_threads++] = e->env_id;
        pthread_mutex_unlock(&lock);
    }
    if (c == -1) {
        got_requested = 0;
        if (jvmpi->RequestEvent(JVMPI_EVENT_CLASS_LOAD, cid) != JVMPI_SUCCESS || !got_requested) {
            printf("ERROR CLASS_LOAD request not answered on this thread\n");
            return;
        }
        if (last_requested.u.class_load.class_id != cid) printf("ERROR CLASS_LOAD for another class\n");
        pthread_mutex_lock(&lock);
        c = known_class(cid);
        if (c < 0 && num_classes < MAX) {
            c = num_classes++;
            class_ids[c] = cid;
            class_names[c] = strdup(last_name);
            if (strcmp(last_name, target) == 0) target_class = cid;
        }
        pthread_mutex_unlock(&lock);
    }
    if (cid && cid == target_class) {
        pthread_mutex_lock(&lock);
        if (target_count++ == 0) {
            first_target_obj = e->u.obj_alloc.obj_id;
            first_target_size = e->u.obj_alloc.size;
        }
        pthread_mutex_unlock(&lock);
    }
}

static void at_shutdown(void) {
    printf("REQUESTS classes=%d threads=%d\n", num_classes, num_threads);
    printf("COUNT %s %ld\n", target, target_count);
    if (first_target_obj) {
        got_requested = 0;
        jint rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_ALLOC, first_target_obj);
        printf("REALLOC same_id=%d same_class=%d same_size=%d requested=%d\n",
               rc == JVMPI_SUCCESS && last_requested.u.obj_alloc.obj_id == first_target_obj,
               last_requested.u.obj_alloc.class_id == target_class,
               last_requested.u.obj_alloc.size == first_target_size, got_requested);
    }
    printf("NOT_AVAILABLE method_entry=%d\n",
           jvmpi->RequestEvent(JVMPI_EVENT_METHOD_ENTRY, NULL) == JVMPI_NOT_AVAILABLE);
    fflush(stdout);
}

static void notify(JVMPI_Event *e) {
    int requested = (e->event_type & JVMPI_REQUESTED_EVENT) != 0;
    int type = e->event_type & ~JVMPI_REQUESTED_EVENT;
    switch (type) {
    case JVMPI_EVENT_OBJECT_ALLOC:
        if (requested) {
            got_requested = 1;
            last_requested = *e;
        } else {
            on_alloc(e);
        }
        break;
    case JVMPI_EVENT_CLASS_LOAD:
    case JVMPI_EVENT_THREAD_START:
        if (!requested) printf("ERROR an event that was not enabled arrived: %d\n", type);
        got_requested = 1;
        last_requested = *e;
        snprintf(last_name, sizeof last_name, "%s",
                 type == JVMPI_EVENT_CLASS_LOAD ? e->u.class_load.class_name : e->u.thread_start.thread_name);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        at_shutdown();
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved) {
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1_1) < 0) return JNI_ERR;
    snprintf(target, sizeof target, "%s", options ? options : "");
    jvmpi->NotifyEvent = notify;
    jvmpi->EnableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
    return JNI_OK;
}
