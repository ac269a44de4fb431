/*
 * A JVMPI dump walker. On Ctrl-\ (DATA_DUMP_REQUEST) it requests a HEAP_DUMP at each level, a MONITOR_DUMP
 * and an OBJECT_DUMP of the first instance of the class named by its option, parses every record with the
 * sizes the specification gives (and the class layouts CLASS_LOAD gave), and prints what it found:
 *
 *   HEAP level=L objects=N instances=I obj_arrays=A prim_arrays=P classes=C roots=R
 *   HEAP level=L class=<name> count=N value_sum=S            (first int field summed, at level 2)
 *   MONITOR java owner=<thread> entries=N enter_waiters=<threads> notify_waiters=<threads>
 *   MONITOR raw name=<name> owner=<thread> entries=N enter_waiters=<threads> notify_waiters=<threads>
 *   MONITOR thread=blocked status=S                          (its JVMPI thread status)
 *   MONITOR traces=N with_frames=F
 *   OBJECT class=<name> bytes=N first_int=V
 *   ERROR ...                                                  (a record that does not parse)
 *
 * Usage: -XrunDumpWalker:<class name>, e.g. JvmpiHeap$Node.
 */
#include <jvmpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static JVMPI_Interface *jvmpi;
static char target[256];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- classes, from CLASS_LOAD ---- */
typedef struct {
    jobjectID id;
    char *name;
    int num_interfaces;
    int num_statics;
    char *static_kinds; /* first character of each static field's signature */
} Class;

static Class *classes;
static size_t cap, used;

static size_t slot(jobjectID id) { return (((size_t)id) * 0x9E3779B97F4A7C15ull >> 20) & (cap - 1); }

static Class *find_class(jobjectID id) {
    if (!cap || !id) return NULL;
    for (size_t s = slot(id);; s = (s + 1) & (cap - 1)) {
        if (classes[s].id == id) return &classes[s];
        if (!classes[s].id) return NULL;
    }
}

static void add_class(JVMPI_Event *e) {
    if ((used + 1) * 2 > cap) {
        Class *old = classes;
        size_t old_cap = cap;
        cap = cap ? cap * 2 : 8192;
        classes = calloc(cap, sizeof(Class));
        for (size_t i = 0; i < old_cap; i++)
            if (old[i].id) {
                size_t s = slot(old[i].id);
                while (classes[s].id) s = (s + 1) & (cap - 1);
                classes[s] = old[i];
            }
        free(old);
    }
    jobjectID id = e->u.class_load.class_id;
    size_t s = slot(id);
    while (classes[s].id && classes[s].id != id) s = (s + 1) & (cap - 1);
    if (!classes[s].id) used++;
    Class *c = &classes[s];
    c->id = id;
    c->name = strdup(e->u.class_load.class_name);
    c->num_interfaces = e->u.class_load.num_interfaces;
    c->num_statics = e->u.class_load.num_static_fields;
    c->static_kinds = malloc(c->num_statics + 1);
    for (int i = 0; i < c->num_statics; i++) c->static_kinds[i] = e->u.class_load.statics[i].field_signature[0];
}

/* ---- reading dump buffers: u2/u4/u8 big-endian, IDs native ---- */
typedef struct {
    unsigned char *p, *end;
    int bad;
} Reader;

static int need(Reader *r, size_t n) {
    if (r->bad || (size_t)(r->end - r->p) < n) { r->bad = 1; return 0; }
    return 1;
}
static unsigned u1(Reader *r) { return need(r, 1) ? *r->p++ : 0; }
static unsigned u2(Reader *r) { if (!need(r, 2)) return 0; unsigned v = (r->p[0] << 8) | r->p[1]; r->p += 2; return v; }
static unsigned u4(Reader *r) {
    if (!need(r, 4)) return 0;
    unsigned v = ((unsigned)r->p[0] << 24) | (r->p[1] << 16) | (r->p[2] << 8) | r->p[3];
    r->p += 4;
    return v;
}
static void *id(Reader *r) { void *v = NULL; if (need(r, sizeof v)) { memcpy(&v, r->p, sizeof v); r->p += sizeof v; } return v; }
static void skip(Reader *r, size_t n) { if (need(r, n)) r->p += n; }

static size_t value_size(int ty) {
    switch (ty) {
    case JVMPI_BOOLEAN: case JVMPI_BYTE: return 1;
    case JVMPI_CHAR: case JVMPI_SHORT: return 2;
    case JVMPI_INT: case JVMPI_FLOAT: return 4;
    case JVMPI_LONG: case JVMPI_DOUBLE: return 8;
    default: return sizeof(void *);
    }
}

static int kind_type(char k) {
    switch (k) {
    case 'Z': return JVMPI_BOOLEAN; case 'B': return JVMPI_BYTE; case 'C': return JVMPI_CHAR;
    case 'S': return JVMPI_SHORT; case 'I': return JVMPI_INT; case 'F': return JVMPI_FLOAT;
    case 'J': return JVMPI_LONG; case 'D': return JVMPI_DOUBLE; default: return JVMPI_CLASS;
    }
}

static jobjectID first_target;

static void walk_heap(JVMPI_Event *e) {
    int level = e->u.heap_dump.dump_level;
    Reader r = {(unsigned char *)e->u.heap_dump.begin, (unsigned char *)e->u.heap_dump.end, 0};
    long objects = 0, instances = 0, obj_arrays = 0, prim_arrays = 0, class_dumps = 0, roots = 0;
    long count = 0, sum = 0;
    while (r.p < r.end && !r.bad) {
        int type = u1(&r);
        if (level == JVMPI_DUMP_LEVEL_0) {
            id(&r);
            objects++;
            continue;
        }
        switch (type) {
        case JVMPI_GC_ROOT_UNKNOWN: case JVMPI_GC_ROOT_STICKY_CLASS: case JVMPI_GC_ROOT_MONITOR_USED:
            id(&r); roots++; break;
        case JVMPI_GC_ROOT_JNI_GLOBAL: case JVMPI_GC_ROOT_THREAD_BLOCK: case JVMPI_GC_ROOT_NATIVE_STACK:
            id(&r); id(&r); roots++; break;
        case JVMPI_GC_ROOT_JNI_LOCAL: case JVMPI_GC_ROOT_JAVA_FRAME:
            id(&r); id(&r); u4(&r); roots++; break;
        case JVMPI_GC_CLASS_DUMP: {
            jobjectID cid = id(&r);
            for (int i = 0; i < 6; i++) id(&r);
            u4(&r);
            Class *c = find_class(cid);
            if (!c) { printf("ERROR class dump of a class without CLASS_LOAD\n"); r.bad = 1; break; }
            for (int i = 0; i < c->num_interfaces; i++) id(&r);
            unsigned cp = u2(&r);
            for (unsigned i = 0; i < cp; i++) { u2(&r); skip(&r, value_size(u1(&r))); }
            for (int i = 0; i < c->num_statics; i++) {
                int ty = kind_type(c->static_kinds[i]);
                if (level == JVMPI_DUMP_LEVEL_2 || ty == JVMPI_CLASS) skip(&r, value_size(ty));
            }
            class_dumps++; objects++;
            break;
        }
        case JVMPI_GC_INSTANCE_DUMP: {
            jobjectID oid = id(&r);
            Class *c = find_class(id(&r));
            unsigned n = u4(&r);
            unsigned char *values = r.p;
            skip(&r, n);
            if (c && strcmp(c->name, target) == 0) {
                count++;
                if (!first_target) first_target = oid;
                if (level == JVMPI_DUMP_LEVEL_2 && n >= 4)
                    sum += (int)(((unsigned)values[0] << 24) | (values[1] << 16) | (values[2] << 8) | values[3]);
            }
            instances++; objects++;
            break;
        }
        case JVMPI_GC_OBJ_ARRAY_DUMP: {
            id(&r);
            unsigned n = u4(&r);
            id(&r);
            skip(&r, (size_t)n * sizeof(void *));
            obj_arrays++; objects++;
            break;
        }
        case JVMPI_GC_PRIM_ARRAY_DUMP: {
            id(&r);
            unsigned n = u4(&r);
            int ty = u1(&r);
            if (level == JVMPI_DUMP_LEVEL_2) skip(&r, (size_t)n * value_size(ty));
            prim_arrays++; objects++;
            break;
        }
        default:
            printf("ERROR unknown heap record type %d at level %d\n", type, level);
            r.bad = 1;
        }
    }
    if (r.bad) printf("ERROR heap dump at level %d does not parse\n", level);
    printf("HEAP level=%d objects=%ld instances=%ld obj_arrays=%ld prim_arrays=%ld classes=%ld roots=%ld traces=%d\n",
           level, objects, instances, obj_arrays, prim_arrays, class_dumps, roots, e->u.heap_dump.num_traces);
    if (level > 0) printf("HEAP level=%d class=%s count=%ld value_sum=%ld\n", level, target, count, sum);
}

/* ---- threads, from THREAD_START ---- */
#define MAX_THREADS 256
static JNIEnv *thread_envs[MAX_THREADS];
static char *thread_names[MAX_THREADS];
static int num_threads;

static void add_thread(JVMPI_Event *e) {
    pthread_mutex_lock(&lock);
    if (num_threads < MAX_THREADS) {
        thread_envs[num_threads] = e->u.thread_start.thread_env_id;
        thread_names[num_threads++] = strdup(e->u.thread_start.thread_name);
    }
    pthread_mutex_unlock(&lock);
}

static const char *thread_name(JNIEnv *env) {
    if (!env) return "none";
    for (int i = 0; i < num_threads; i++)
        if (thread_envs[i] == env) return thread_names[i];
    return "unknown";
}

/* Appends the names of `n` threads read from the dump to `buf`, comma-separated. */
static void read_threads(Reader *r, unsigned n, char *buf, size_t size) {
    buf[0] = 0;
    for (unsigned i = 0; i < n; i++) {
        const char *name = thread_name(id(r));
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%s", i ? "," : "", name);
    }
}

static void walk_monitors(JVMPI_Event *e) {
    Reader r = {(unsigned char *)e->u.monitor_dump.begin, (unsigned char *)e->u.monitor_dump.end, 0};
    while (r.p < r.end && !r.bad) {
        int type = u1(&r);
        const char *raw_name = NULL;
        if (type == JVMPI_MONITOR_RAW) raw_name = id(&r);
        else if (type != JVMPI_MONITOR_JAVA) { printf("ERROR unknown monitor record %d\n", type); break; }
        id(&r);
        JNIEnv *owner = id(&r);
        unsigned entries = u4(&r);
        char enter[1024], notify[1024];
        read_threads(&r, u4(&r), enter, sizeof enter);
        read_threads(&r, u4(&r), notify, sizeof notify);
        if (raw_name)
            printf("MONITOR raw name=%s owner=%s entries=%u enter_waiters=%s notify_waiters=%s\n", raw_name,
                   thread_name(owner), entries, enter, notify);
        else
            printf("MONITOR java owner=%s entries=%u enter_waiters=%s notify_waiters=%s\n", thread_name(owner),
                   entries, enter, notify);
    }
    if (r.bad) printf("ERROR monitor dump does not parse\n");
    int with_frames = 0;
    for (int i = 0; i < e->u.monitor_dump.num_traces; i++) {
        JVMPI_CallTrace *t = &e->u.monitor_dump.traces[i];
        if (t->num_frames > 0 && t->frames[0].method_id) with_frames++;
        if (strcmp(thread_name(t->env_id), "blocked") == 0)
            printf("MONITOR thread=blocked status=%d\n", e->u.monitor_dump.threads_status[i]);
    }
    printf("MONITOR traces=%d with_frames=%d\n", e->u.monitor_dump.num_traces, with_frames);
}

static void walk_object(JVMPI_Event *e) {
    Reader r = {(unsigned char *)e->u.object_dump.data, (unsigned char *)e->u.object_dump.data + e->u.object_dump.data_len, 0};
    if (u1(&r) != JVMPI_GC_INSTANCE_DUMP) { printf("ERROR object dump is not an instance dump\n"); return; }
    id(&r);
    Class *c = find_class(id(&r));
    unsigned n = u4(&r);
    unsigned v = n >= 4 ? u4(&r) : 0;
    printf("OBJECT class=%s bytes=%u first_int=%d\n", c ? c->name : "?", n, (int)v);
}

static void dump_all(void) {
    for (int level = 0; level <= 2; level++) {
        JVMPI_HeapDumpArg arg = {level};
        jint rc = jvmpi->RequestEvent(JVMPI_EVENT_HEAP_DUMP, &arg);
        if (rc != JVMPI_SUCCESS) printf("ERROR HEAP_DUMP request at level %d: %d\n", level, rc);
    }
    /* A raw monitor of our own, held twice during the monitor dump. */
    JVMPI_RawMonitor held = jvmpi->RawMonitorCreate("walker-held");
    jvmpi->RawMonitorEnter(held);
    jvmpi->RawMonitorEnter(held);
    jint rc = jvmpi->RequestEvent(JVMPI_EVENT_MONITOR_DUMP, NULL);
    if (rc != JVMPI_SUCCESS) printf("ERROR MONITOR_DUMP request: %d\n", rc);
    jvmpi->RawMonitorExit(held);
    jvmpi->RawMonitorExit(held);
    jvmpi->RawMonitorDestroy(held);
    if (first_target) {
        rc = jvmpi->RequestEvent(JVMPI_EVENT_OBJECT_DUMP, first_target);
        if (rc != JVMPI_SUCCESS) printf("ERROR OBJECT_DUMP request: %d\n", rc);
    }
    printf("DUMPS done\n");
    fflush(stdout);
}

static void notify(JVMPI_Event *e) {
    int requested = (e->event_type & JVMPI_REQUESTED_EVENT) != 0;
    switch (e->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
        pthread_mutex_lock(&lock);
        add_class(e);
        pthread_mutex_unlock(&lock);
        break;
    case JVMPI_EVENT_THREAD_START:
        add_thread(e);
        break;
    case JVMPI_EVENT_DATA_DUMP_REQUEST:
        dump_all();
        break;
    case JVMPI_EVENT_HEAP_DUMP:
        if (!requested) printf("ERROR HEAP_DUMP without the requested bit\n");
        pthread_mutex_lock(&lock);
        walk_heap(e);
        pthread_mutex_unlock(&lock);
        break;
    case JVMPI_EVENT_MONITOR_DUMP:
        walk_monitors(e);
        break;
    case JVMPI_EVENT_OBJECT_DUMP:
        pthread_mutex_lock(&lock);
        walk_object(e);
        pthread_mutex_unlock(&lock);
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved) {
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1_2) < 0) return JNI_ERR;
    snprintf(target, sizeof target, "%s", options ? options : "");
    jvmpi->NotifyEvent = notify;
    jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_THREAD_START, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_DATA_DUMP_REQUEST, NULL);
    if (jvmpi->EnableEvent(JVMPI_EVENT_HEAP_DUMP, NULL) != JVMPI_NOT_AVAILABLE)
        printf("ERROR EnableEvent(HEAP_DUMP) must answer JVMPI_NOT_AVAILABLE\n");
    return JNI_OK;
}
