/*
 * The per-thread method counter of the JVMPI specification ("thread-local storage"): THREAD_START sets up a
 * counter in the thread's JVMPI thread-local storage, METHOD_ENTRY increments it without a lock, and
 * THREAD_END prints it:
 *
 *   Thread <name> executed <n> methods
 */
#include <jvmpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static JVMPI_Interface *jvmpi;

typedef struct {
    char name[128];
    long count;
} Counter;

static void ThreadStartHandler(JVMPI_Event *event) {
    Counter *c = calloc(1, sizeof(Counter));
    snprintf(c->name, sizeof c->name, "%s", event->u.thread_start.thread_name ? event->u.thread_start.thread_name : "?");
    jvmpi->SetThreadLocalStorage(event->u.thread_start.thread_env_id, c);
}

static void MethodEntryHandler(JNIEnv *thread_id) {
    Counter *c = jvmpi->GetThreadLocalStorage(thread_id);
    if (c == NULL) {
        fprintf(stdout, "ERROR: METHOD_ENTRY on a thread without THREAD_START\n");
        return;
    }
    c->count++;
}

static void ThreadEndHandler(JNIEnv *thread_id) {
    Counter *c = jvmpi->GetThreadLocalStorage(thread_id);
    if (c == NULL) {
        fprintf(stdout, "ERROR: THREAD_END on a thread without THREAD_START\n");
        return;
    }
    fprintf(stdout, "Thread %s executed %ld methods\n", c->name, c->count);
    fflush(stdout);
    jvmpi->SetThreadLocalStorage(thread_id, NULL);
    free(c);
}

static void notify(JVMPI_Event *event) {
    switch (event->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_THREAD_START:
        ThreadStartHandler(event);
        break;
    case JVMPI_EVENT_METHOD_ENTRY:
        MethodEntryHandler(event->env_id);
        break;
    case JVMPI_EVENT_THREAD_END:
        ThreadEndHandler(event->env_id);
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved) {
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) < 0) return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    if (jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL) != JVMPI_SUCCESS ||
        jvmpi->EnableEvent(JVMPI_EVENT_THREAD_END, NULL) != JVMPI_SUCCESS ||
        jvmpi->EnableEvent(JVMPI_EVENT_METHOD_ENTRY, NULL) != JVMPI_SUCCESS) {
        fprintf(stderr, "MethodCounter: cannot enable the events\n");
        return JNI_ERR;
    }
    return JNI_OK;
}
