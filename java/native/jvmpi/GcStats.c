/*
 * A JVMPI agent exercising GC events and the utility functions: it counts GC_START / GC_FINISH pairs, runs
 * RunGC three times (with DisableGC / EnableGC nested around nothing), starts a system thread that waits on a
 * raw monitor until shutdown, suspends and resumes it (alone and as a list) checking its status, counts
 * COMPILED_METHOD_LOADs, reads its CPU time, and prints at shutdown:
 *
 *   GC starts=N finishes=N unpaired=0 used_objects=U used_space=B total_space=T   (the first finish's)
 *   SYSTEM_THREAD ran=1 woke=1
 *   SUSPEND suspended_bit=1 resumed_clear=1 list_ok=1 object_ok=1
 *   COMPILED loads=N bad=0
 *   RAW contended_enter=1 contended_entered=1 contended_exit=1 quiet=0   (main contends with the worker)
 *   CPU main_ns>0=1
 *   ERROR ...
 */
#include <jvmpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static JVMPI_Interface *jvmpi;
static volatile long starts, finishes, unpaired;
static volatile int in_gc;
static volatile jlong first_used_objects = -2, first_used_space = -2, first_total_space = -2;
static JVMPI_RawMonitor monitor;
static volatile int worker_ran, worker_stop, worker_woke;
static JNIEnv *volatile worker_env;
static JVMPI_RawMonitor held, quiet;
static volatile int worker_holds, main_trying;
static volatile long raw_enter, raw_entered, raw_exit, raw_quiet;

/* Holds `m` until the main thread is about to enter it, and 100 ms more so that it blocks. */
static void hold_briefly(JVMPI_RawMonitor m, int stage) {
    struct timespec tick = {0, 1000 * 1000}, hold = {0, 100 * 1000 * 1000};
    jvmpi->RawMonitorEnter(m);
    worker_holds = stage;
    while (main_trying != stage) nanosleep(&tick, NULL);
    nanosleep(&hold, NULL);
    jvmpi->RawMonitorExit(m);
}
static volatile long compiled_loads, compiled_bad;

static void worker(void *arg) {
    hold_briefly(held, 1);
    hold_briefly(quiet, 2);
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
    held = jvmpi->RawMonitorCreate("gcstats-held");
    quiet = jvmpi->RawMonitorCreate("_gcstats-quiet");
    if (jvmpi->CreateSystemThread("gcstats-worker", JVMPI_NORMAL_PRIORITY, worker) != JNI_OK)
        printf("ERROR CreateSystemThread failed\n");
    /* Contend with the worker for each monitor it holds for a while. */
    for (int stage = 1; stage <= 2; stage++) {
        JVMPI_RawMonitor m = stage == 1 ? held : quiet;
        struct timespec tick = {0, 1000 * 1000};
        while (worker_holds != stage) nanosleep(&tick, NULL);
        main_trying = stage;
        jvmpi->RawMonitorEnter(m);
        jvmpi->RawMonitorExit(m);
    }
    jvmpi->RawMonitorEnter(monitor);
    while (!worker_ran) jvmpi->RawMonitorWait(monitor, 1000);
    jvmpi->RawMonitorExit(monitor);
    jvmpi->DisableGC();
    jvmpi->DisableGC();
    jvmpi->EnableGC();
    jvmpi->EnableGC();
    for (int i = 0; i < 3; i++) jvmpi->RunGC();
}

/* Suspends and resumes the waiting system thread, one by one and as a list, checking its status. */
static void suspend_checks(void) {
    int suspended_bit = 0, resumed_clear = 0, list_ok = 0, object_ok = 0;
    if (worker_env) {
        jvmpi->DisableGC();
        jvmpi->SuspendThread(worker_env);
        suspended_bit = (jvmpi->GetThreadStatus(worker_env) & JVMPI_THREAD_SUSPENDED) != 0;
        jvmpi->ResumeThread(worker_env);
        resumed_clear = (jvmpi->GetThreadStatus(worker_env) & JVMPI_THREAD_SUSPENDED) == 0;
        JNIEnv *list[1] = {worker_env};
        jint results[1] = {-1};
        jvmpi->SuspendThreadList(1, list, results);
        int suspended_ok = results[0] == 0 && (jvmpi->GetThreadStatus(worker_env) & JVMPI_THREAD_SUSPENDED);
        (void)jvmpi->ThreadHasRun(worker_env);
        results[0] = -1;
        jvmpi->ResumeThreadList(1, list, results);
        list_ok = suspended_ok && results[0] == 0;
        jobjectID thread = jvmpi->GetThreadObject(worker_env);
        object_ok = thread != NULL && jvmpi->jobjectID2jobject(thread) != NULL;
        jvmpi->EnableGC();
    }
    printf("SUSPEND suspended_bit=%d resumed_clear=%d list_ok=%d object_ok=%d\n", suspended_bit, resumed_clear,
           list_ok, object_ok);
}

static void shut_down(void) {
    suspend_checks();
    jvmpi->RawMonitorEnter(monitor);
    worker_stop = 1;
    jvmpi->RawMonitorNotifyAll(monitor);
    while (!worker_woke) jvmpi->RawMonitorWait(monitor, 1000);
    jvmpi->RawMonitorExit(monitor);
    printf("GC starts=%ld finishes=%ld unpaired=%ld used_objects=%lld used_space=%lld total_space=%lld\n", starts,
           finishes, unpaired, (long long)first_used_objects, (long long)first_used_space,
           (long long)first_total_space);
    printf("SYSTEM_THREAD ran=%d woke=%d\n", worker_ran, worker_woke);
    printf("COMPILED loads=%ld bad=%ld\n", compiled_loads, compiled_bad);
    printf("RAW contended_enter=%ld contended_entered=%ld contended_exit=%ld quiet=%ld\n", raw_enter, raw_entered,
           raw_exit, raw_quiet);
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
        if (finishes++ == 0) {
            first_used_objects = e->u.gc_info.used_objects;
            first_used_space = e->u.gc_info.used_object_space;
            first_total_space = e->u.gc_info.total_object_space;
        }
        break;
    case JVMPI_EVENT_THREAD_START:
        if (strcmp(e->u.thread_start.thread_name, "gcstats-worker") == 0) worker_env = e->u.thread_start.thread_env_id;
        break;
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED:
    case JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT: {
        int type = e->event_type & ~JVMPI_REQUESTED_EVENT;
        if (e->u.raw_monitor.id == quiet) raw_quiet++;
        else if (e->u.raw_monitor.id == held && strcmp(e->u.raw_monitor.name, "gcstats-held") == 0) {
            if (type == JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER) raw_enter++;
            else if (type == JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED) raw_entered++;
            else raw_exit++;
        }
        break;
    }
    case JVMPI_EVENT_COMPILED_METHOD_LOAD:
        compiled_loads++;
        if (!e->u.compiled_method_load.method_id || !e->u.compiled_method_load.code_addr ||
            e->u.compiled_method_load.code_size <= 0 ||
            (e->u.compiled_method_load.lineno_table_size > 0 && !e->u.compiled_method_load.lineno_table))
            compiled_bad++;
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
    jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_COMPILED_METHOD_LOAD, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
    return JNI_OK;
}
