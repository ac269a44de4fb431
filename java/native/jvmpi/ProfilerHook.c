/*
 * ProfilerHook: the JVMPI agent of "What Is the Java VM Profiler Interface?" (Dr. Dobb's Journal,
 * September 1999), in portable C. Like the article's, it enables CLASS_LOAD, OBJECT_ALLOC and JVM_SHUT_DOWN,
 * counts instances and bytes per class under one lock, and prints the summary at shutdown, largest first:
 *
 *   Shutdown Summary
 *   Size    Count   Name
 *   ...
 *   Total Memory:   N
 *   Total Objects:  N
 *
 * It uses nothing but JVMPI and the C library: run it with `java -agentpath:libjvmpi.so -XrunProfilerHook
 * Main` or `java -agentpath:libjvmpi.so=/abs/libProfilerHook.so Main`.
 */
#include <jvmpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    jobjectID class_id;
    char *name;
    long count;
    long size;
} ClassItem;

static JVMPI_Interface *g_pProfiler;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

/* The class map: open addressing on the class ID. */
static ClassItem *g_classes;
static size_t g_capacity, g_used;

static size_t slot_of(jobjectID id, size_t capacity) {
    size_t h = (size_t)id * 0x9E3779B97F4A7C15ull;
    return (h >> 17) & (capacity - 1);
}

static void grow(void) {
    size_t capacity = g_capacity ? g_capacity * 2 : 4096;
    ClassItem *classes = calloc(capacity, sizeof(ClassItem));
    for (size_t i = 0; i < g_capacity; i++) {
        if (g_classes[i].class_id) {
            size_t s = slot_of(g_classes[i].class_id, capacity);
            while (classes[s].class_id) s = (s + 1) & (capacity - 1);
            classes[s] = g_classes[i];
        }
    }
    free(g_classes);
    g_classes = classes;
    g_capacity = capacity;
}

static ClassItem *find(jobjectID id) {
    if (!g_capacity || !id) return NULL;
    for (size_t s = slot_of(id, g_capacity);; s = (s + 1) & (g_capacity - 1)) {
        if (g_classes[s].class_id == id) return &g_classes[s];
        if (!g_classes[s].class_id) return NULL;
    }
}

static void insert(jobjectID id, const char *name) {
    if (!id) return;
    if ((g_used + 1) * 2 > g_capacity) grow();
    size_t s = slot_of(id, g_capacity);
    while (g_classes[s].class_id && g_classes[s].class_id != id) s = (s + 1) & (g_capacity - 1);
    if (!g_classes[s].class_id) g_used++;
    else free(g_classes[s].name);
    g_classes[s].class_id = id;
    g_classes[s].name = strdup(name ? name : "?");
    g_classes[s].count = 0;
    g_classes[s].size = 0;
}

static int greater(const void *a, const void *b) {
    const ClassItem *x = *(ClassItem *const *)a, *y = *(ClassItem *const *)b;
    if (x->size != y->size) return x->size < y->size ? 1 : -1;
    return strcmp(x->name, y->name);
}

static void summary(void) {
    long totalObjects = 0, totalMemory = 0;
    ClassItem **list = malloc((g_used + 1) * sizeof(ClassItem *));
    size_t n = 0;
    for (size_t i = 0; i < g_capacity; i++) {
        if (g_classes[i].class_id) {
            list[n++] = &g_classes[i];
            totalObjects += g_classes[i].count;
            totalMemory += g_classes[i].size;
        }
    }
    qsort(list, n, sizeof(ClassItem *), greater);
    printf("\n\nShutdown Summary\n");
    printf("Size\tCount\tName\n");
    for (size_t i = 0; i < n; i++) printf("%ld\t%ld\t%s\n", list[i]->size, list[i]->count, list[i]->name);
    printf("\n");
    printf("Total Memory:\t%ld\n", totalMemory);
    printf("Total Objects:\t%ld\n", totalObjects);
    fflush(stdout);
    free(list);
}

static void HandleEvent(JVMPI_Event *pEvent) {
    int event = pEvent->event_type & ~JVMPI_REQUESTED_EVENT;
    pthread_mutex_lock(&g_lock);
    switch (event) {
    case JVMPI_EVENT_CLASS_LOAD:
        insert(pEvent->u.class_load.class_id, pEvent->u.class_load.class_name);
        break;
    case JVMPI_EVENT_OBJECT_ALLOC: {
        ClassItem *pItem = find(pEvent->u.obj_alloc.class_id);
        if (pItem) {
            pItem->count++;
            pItem->size += pEvent->u.obj_alloc.size;
        }
        break;
    }
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        summary();
        break;
    }
    pthread_mutex_unlock(&g_lock);
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved) {
    int res = (*jvm)->GetEnv(jvm, (void **)&g_pProfiler, JVMPI_VERSION_1);
    if (res < 0) return JNI_ERR;
    g_pProfiler->NotifyEvent = HandleEvent;
    g_pProfiler->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
    g_pProfiler->EnableEvent(JVMPI_EVENT_OBJECT_ALLOC, NULL);
    g_pProfiler->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
    return JNI_OK;
}
