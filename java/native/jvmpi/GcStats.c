/*
 * A JVMPI agent exercising GC events and the utility functions: it counts GC_START / GC_FINISH pairs, runs
 * RunGC three times (with DisableGC / EnableGC nested around nothing), starts a system thread that waits on a
 * raw monitor until shutdown, reads its CPU time and thread status, and prints at shutdown:
 *
 *   GC starts=N finishes=N unpaired=0 used_objects=<first finish's figure>
 *   SYSTEM_THREAD ran=1 woke=1
 *   CPU main_ns>0=1
 *   ERROR ...
 */
#include <jvmpi.h>
#include <stdio.h>
#include <string.h>

static JVMPI_Interface *jvmpi;
static volatile long starts, finishes, unpaired;
static volatile int in_gc;
static volatile jlong first_used_objects = -2;
static JVMPI_RawMonitor monitor;
static volatile int worker_ran, worker_stop, worker_woke;

static void worker(void *arg) {
    jvmpi->RawMonitorEnter(monitor);
    worker_ran = 1;
    jvmpi->RawMonitorNotifyAll(monitor);
    while (!worker_stop) jvmpi->RawMonitorWait(monitor, 0);
    worker_woke = 1;
    jvmpi->RawMonitorNotifyAll(monitor);
    jvmpi->RawMonitorExit(monitor);
}

static void init_done(void) {
    monitor = jvmpi->RawMonitorCreate("gcstats");
    if (jvmpi->CreateSystemThread("gcstats-worker", JVMPI_NORMAL_PRIORITY, worker) != JNI_OK)
        printf("ERROR CreateSystemThread failed\n");
    jvmpi->RawMonitorEnter(monitor);
    while (!worker_ran) jvmpi->RawMonitorWait(monitor, 1000);
    jvmpi->RawMonitorExit(monitor);
    jvmpi->DisableGC();
    jvmpi->DisableGC();
    jvmpi->EnableGC();
    jvmpi->EnableGC();
    for (int i = 0; i < 3; i++) jvmpi->RunGC();
}

static void shut_down(void) {
    jvmpi->RawMonitorEnter(monitor);
    worker_stop = 1;
    jvmpi->RawMonitorNotifyAll(monitor);
    while (!worker_woke) jvmpi->RawMonitorWait(monitor, 1000);
    jvmpi->RawMonitorExit(monitor);
    printf("GC starts=%ld finishes=%ld unpaired=%ld used_objects=%lld\n", starts, finishes, unpaired,
           (long long)first_used_objects);
    printf("SYSTEM_THREAD ran=%d woke=%d\n", worker_ran, worker_woke);
    printf("CPU main_ns>0=%d\n", jvmpi->GetCurrentThreadCpuTime() > 0);
    fflush(stdout);
}

static void notify(JVMPI_Event *e) {
    switch (e->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_GC_START:
        if (in_gc) unpaired++;
        in_gc = 1;
        starts++;
        break;
    case JVMPI_EVENT_GC_FINISH:
        if (!in_gc) unpaired++;
        in_gc = 0;
        if (finishes++ == 0) first_used_objects = e->u.gc_info.used_objects;
        break;
    case JVMPI_EVENT_JVM_INIT_DONE:
        init_done();
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        shut_down();
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved) {
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) < 0) return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    jvmpi->EnableEvent(JVMPI_EVENT_GC_START, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_GC_FINISH, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_INIT_DONE, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
    return JNI_OK;
}
