/*
 * A JVMPI agent that checks one event of each family against JvmpiEvents' known behaviour and prints, at
 * shutdown:
 *
 *   ENTRY2 touch=N same_receiver=1 stat=N null_receiver=1
 *   EXIT touch=N stat=N
 *   CALLTRACE top_is_touch=1 depth>=2=1
 *   CONTENDED enter=N entered=N on_contender=1     (on thread "contender")
 *   WAIT wait=N timeout=50 waited=N waited_ms>=40=1 (on thread "main")
 *   FREE garbage_allocated=N garbage_freed=N
 *   HOOK classes=N magic_ok=1
 *   UNLOAD payload=1                                      (JvmpiUnloadPayload's CLASS_UNLOAD)
 *   GLOBALREF alloc=1 free=1 weak_alloc=1 weak_free=1     (for the references it makes itself at INIT_DONE)
 *   ENTRY2_ENABLE at=load|init rc=SUCCESS|NOT_AVAILABLE|FAIL   (when it enables METHOD_ENTRY2)
 *   ERROR ...
 *
 * With the option "entry2=late" it enables METHOD_ENTRY2 at JVM_INIT_DONE instead of in JVM_OnLoad, as
 * agents that switch it on at run time do.
 */
#include <jvmpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static JVMPI_Interface *jvmpi;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static jmethodID touch_id, stat_id;
static jobjectID garbage_class, first_receiver, payload_class;
static int payload_unloaded;
static long touch_entries, stat_entries, touch_exits, stat_exits, same_receiver = 1, null_receiver = 1;
static long trace_top_ok = 1, trace_deep = 1, traces;
static long contended_enter, contended_entered, on_contender = 1;
static long waits, waiteds, wait_timeout = -1, waited_ms = -1;
static long hooks, magic_ok = 1;
static JNIEnv *contender_env, *main_env;
static jobject probe_ref, probe_weak;
static jobjectID probe_obj;
static int ref_alloc, ref_free, weak_alloc, weak_free;
static int entry2_late;

static void enable_entry2(const char *at) {
    jint rc = jvmpi->EnableEvent(JVMPI_EVENT_METHOD_ENTRY2, NULL);
    printf("ENTRY2_ENABLE at=%s rc=%s\n", at,
           rc == JVMPI_SUCCESS ? "SUCCESS" : rc == JVMPI_NOT_AVAILABLE ? "NOT_AVAILABLE" : "FAIL");
    fflush(stdout);
}

/* Makes and drops a global and a weak global reference to java.lang.Object's class; the events for them
 * arrive inside the JNI calls, on this thread. */
static void globalref_probe(JNIEnv *env) {
    jclass c = (*env)->FindClass(env, "java/lang/Object");
    probe_obj = jvmpi->jobject2jobjectID(c);
    probe_ref = NULL;
    jobject g = (*env)->NewGlobalRef(env, c);
    if (probe_ref != g) ref_alloc = 0;
    (*env)->DeleteGlobalRef(env, g);
    jobject w = (*env)->NewWeakGlobalRef(env, c);
    if (probe_weak != w) weak_alloc = 0;
    (*env)->DeleteWeakGlobalRef(env, w);
    (*env)->DeleteLocalRef(env, c);
}

/* IDs of Garbage objects alive: a set by open addressing. */
#define SET_SIZE (1 << 16)
static jobjectID garbage[SET_SIZE];
static long garbage_allocated, garbage_freed;

static size_t h(jobjectID id) { return (((size_t)id) * 0x9E3779B97F4A7C15ull >> 40) & (SET_SIZE - 1); }
static void set_add(jobjectID id) {
    size_t s = h(id);
    while (garbage[s]) s = (s + 1) & (SET_SIZE - 1);
    garbage[s] = id;
}
static int set_remove(jobjectID id) {
    /* Deletion by marking: (jobjectID)1 is never an ID handed out for a Garbage object here. */
    for (size_t s = h(id); garbage[s]; s = (s + 1) & (SET_SIZE - 1))
        if (garbage[s] == id) { garbage[s] = (jobjectID)1; return 1; }
    return 0;
}

static void class_load(JVMPI_Event *e) {
    const char *name = e->u.class_load.class_name;
    if (strcmp(name, "JvmpiEvents$Target") == 0) {
        for (int i = 0; i < e->u.class_load.num_methods; i++) {
            JVMPI_Method *m = &e->u.class_load.methods[i];
            if (strcmp(m->method_name, "touch") == 0) touch_id = m->method_id;
            if (strcmp(m->method_name, "stat") == 0) stat_id = m->method_id;
        }
    } else if (strcmp(name, "JvmpiEvents$Garbage") == 0) {
        garbage_class = e->u.class_load.class_id;
    } else if (strcmp(name, "JvmpiUnloadPayload") == 0) {
        payload_class = e->u.class_load.class_id;
    }
}

static void entry2(JVMPI_Event *e) {
    jmethodID m = e->u.method_entry2.method_id;
    if (m == touch_id && m) {
        touch_entries++;
        if (!first_receiver) first_receiver = e->u.method_entry2.obj_id;
        if (!e->u.method_entry2.obj_id || e->u.method_entry2.obj_id != first_receiver) same_receiver = 0;
        JVMPI_CallFrame frames[8];
        JVMPI_CallTrace trace = {e->env_id, 0, frames};
        jvmpi->GetCallTrace(&trace, 8);
        traces++;
        if (trace.num_frames < 1 || frames[0].method_id != touch_id) trace_top_ok = 0;
        if (trace.num_frames < 2) trace_deep = 0;
    } else if (m == stat_id && m) {
        stat_entries++;
        if (e->u.method_entry2.obj_id) null_receiver = 0;
    }
}

static void notify(JVMPI_Event *e) {
    int type = e->event_type & ~JVMPI_REQUESTED_EVENT;
    /* These arrive inside JNI calls made by this agent: no lock. */
    switch (type) {
    case JVMPI_EVENT_JVM_INIT_DONE:
        globalref_probe(e->env_id);
        if (entry2_late) enable_entry2("init");
        return;
    case JVMPI_EVENT_JNI_GLOBALREF_ALLOC:
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC:
        if (probe_obj && e->u.jni_globalref_alloc.obj_id == probe_obj) {
            if (type == JVMPI_EVENT_JNI_GLOBALREF_ALLOC) { probe_ref = e->u.jni_globalref_alloc.ref_id; ref_alloc = 1; }
            else { probe_weak = e->u.jni_globalref_alloc.ref_id; weak_alloc = 1; }
        }
        return;
    case JVMPI_EVENT_JNI_GLOBALREF_FREE:
        if (probe_ref && e->u.jni_globalref_free.ref_id == probe_ref) ref_free = 1;
        return;
    case JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE:
        if (probe_weak && e->u.jni_globalref_free.ref_id == probe_weak) weak_free = 1;
        return;
    }
    pthread_mutex_lock(&lock);
    switch (type) {
    case JVMPI_EVENT_CLASS_LOAD:
        class_load(e);
        break;
    case JVMPI_EVENT_THREAD_START:
        if (strcmp(e->u.thread_start.thread_name, "contender") == 0) contender_env = e->u.thread_start.thread_env_id;
        if (strcmp(e->u.thread_start.thread_name, "main") == 0) main_env = e->u.thread_start.thread_env_id;
        break;
    case JVMPI_EVENT_METHOD_ENTRY2:
        entry2(e);
        break;
    case JVMPI_EVENT_METHOD_EXIT:
        if (e->u.method.method_id == touch_id) touch_exits++;
        if (e->u.method.method_id == stat_id) stat_exits++;
        break;
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTER:
    case JVMPI_EVENT_MONITOR_CONTENDED_ENTERED:
        /* Only the contender's: the JDK's own threads contend too. */
        if (e->env_id != contender_env || !contender_env) break;
        if (type == JVMPI_EVENT_MONITOR_CONTENDED_ENTER) contended_enter++; else contended_entered++;
        if (!e->u.monitor.object) on_contender = 0;
        break;
    case JVMPI_EVENT_MONITOR_WAIT:
        if (e->env_id != main_env || !main_env) break;
        waits++;
        wait_timeout = e->u.monitor_wait.timeout;
        break;
    case JVMPI_EVENT_MONITOR_WAITED:
        if (e->env_id != main_env || !main_env) break;
        waiteds++;
        waited_ms = e->u.monitor_wait.timeout;
        break;
    case JVMPI_EVENT_OBJECT_ALLOC:
        if (garbage_class && e->u.obj_alloc.class_id == garbage_class) {
            garbage_allocated++;
            set_add(e->u.obj_alloc.obj_id);
        }
        break;
    case JVMPI_EVENT_OBJECT_FREE:
        if (set_remove(e->u.obj_free.obj_id)) garbage_freed++;
        break;
    case JVMPI_EVENT_CLASS_UNLOAD:
        if (payload_class && e->u.class_unload.class_id == payload_class) payload_unloaded++;
        break;
    case JVMPI_EVENT_CLASS_LOAD_HOOK:
        hooks++;
        if (e->u.class_load_hook.class_data_len < 4 || memcmp(e->u.class_load_hook.class_data, "\xca\xfe\xba\xbe", 4) != 0)
            magic_ok = 0;
        /* Leave the class as it is. */
        e->u.class_load_hook.new_class_data = e->u.class_load_hook.class_data;
        e->u.class_load_hook.new_class_data_len = e->u.class_load_hook.class_data_len;
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        printf("ENTRY2 touch=%ld same_receiver=%ld stat=%ld null_receiver=%ld\n", touch_entries, same_receiver,
               stat_entries, null_receiver);
        printf("EXIT touch=%ld stat=%ld\n", touch_exits, stat_exits);
        printf("CALLTRACE top_is_touch=%ld depth>=2=%ld traces=%ld\n", trace_top_ok, trace_deep, traces);
        printf("CONTENDED enter=%ld entered=%ld on_contender=%ld\n", contended_enter, contended_entered, on_contender);
        printf("WAIT wait=%ld timeout=%ld waited=%ld waited_ms>=40=%d\n", waits, wait_timeout, waiteds, waited_ms >= 40);
        printf("FREE garbage_allocated=%ld garbage_freed=%ld\n", garbage_allocated, garbage_freed);
        printf("HOOK classes=%ld magic_ok=%ld\n", hooks, magic_ok);
        printf("UNLOAD payload=%d\n", payload_unloaded);
        printf("GLOBALREF alloc=%d free=%d weak_alloc=%d weak_free=%d\n", ref_alloc, ref_free, weak_alloc, weak_free);
        fflush(stdout);
        break;
    }
    pthread_mutex_unlock(&lock);
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved) {
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) < 0) return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    entry2_late = options && strstr(options, "entry2=late") != NULL;
    if (!entry2_late) enable_entry2("load");
    jint events[] = {JVMPI_EVENT_CLASS_LOAD, JVMPI_EVENT_THREAD_START, JVMPI_EVENT_METHOD_EXIT,
                     JVMPI_EVENT_MONITOR_CONTENDED_ENTER, JVMPI_EVENT_MONITOR_CONTENDED_ENTERED, JVMPI_EVENT_MONITOR_WAIT, JVMPI_EVENT_MONITOR_WAITED,
                     JVMPI_EVENT_OBJECT_ALLOC, JVMPI_EVENT_OBJECT_FREE, JVMPI_EVENT_CLASS_LOAD_HOOK,
                     JVMPI_EVENT_JVM_SHUT_DOWN, JVMPI_EVENT_JVM_INIT_DONE, JVMPI_EVENT_JNI_GLOBALREF_ALLOC,
                     JVMPI_EVENT_JNI_GLOBALREF_FREE, JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC,
                     JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE, JVMPI_EVENT_CLASS_UNLOAD};
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        if (jvmpi->EnableEvent(events[i], NULL) != JVMPI_SUCCESS) printf("ERROR cannot enable %d\n", events[i]);
    if (jvmpi->EnableEvent(JVMPI_EVENT_INSTRUCTION_START, NULL) != JVMPI_NOT_AVAILABLE)
        printf("ERROR INSTRUCTION_START must be JVMPI_NOT_AVAILABLE\n");
    return JNI_OK;
}
