// The JVM's own cost of its two heap walks, with callbacks that do nothing, against `jcmd GC.heap_dump`:
// on each SIGQUIT (DataDumpRequest) this agent runs IterateThroughHeap, then FollowReferences visiting
// everything, and prints their wall and process CPU time (the walks run at a safepoint: the CPU is theirs).
// A third walk, IterateThroughHeap copying each object's bytes into a reused 8 MiB buffer, is what a dump's
// VM-thread side would cost if encoder threads decoded the copies: the object is two words below tag_ptr
// in HotSpot's CallbackWrapper, JDK 17 to 25 (see crates/hotspot/src/heap/objects.rs).
// Built and run by floor.sh; a measuring tool, not part of the product.
#include <jvmti.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
static jvmtiEnv *J;
static long n;
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static double cpu(void) { struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static jint JNICALL iter(jlong ct, jlong size, jlong *tag, jint len, void *u) { n++; return 0; }
static char copies[8 << 20];
static size_t at;
static jint JNICALL copy(jlong ct, jlong size, jlong *tag, jint len, void *u) {
  const char *obj = *(const char *const *)(tag - 2);
  if (size > (jlong)sizeof copies) size = sizeof copies;
  if (at + size > sizeof copies) at = 0;
  memcpy(copies + at, obj, size);
  at += size;
  n++;
  return 0;
}
static jint JNICALL fref(jvmtiHeapReferenceKind k, const jvmtiHeapReferenceInfo *i, jlong ct, jlong rct, jlong size,
                         jlong *tag, jlong *rtag, jint len, void *u) { n++; return JVMTI_VISIT_OBJECTS; }
static jint JNICALL arr(jlong ct, jlong size, jlong *tag, jint count, jvmtiPrimitiveType t, const void *e, void *u) { return 0; }
static void JNICALL dump(jvmtiEnv *j) {
  jvmtiHeapCallbacks cb; memset(&cb, 0, sizeof cb);
  cb.heap_iteration_callback = iter;
  double t0 = now(), c0 = cpu(); n = 0;
  (*J)->IterateThroughHeap(J, 0, NULL, &cb, NULL);
  fprintf(stderr, "floor: IterateThroughHeap %ld objects %.3f s (cpu %.3f)\n", n, now() - t0, cpu() - c0);
  cb.heap_iteration_callback = copy;
  t0 = now(); c0 = cpu(); n = 0;
  (*J)->IterateThroughHeap(J, 0, NULL, &cb, NULL);
  fprintf(stderr, "floor: IterateThroughHeap copying each object %ld objects %.3f s (cpu %.3f)\n", n, now() - t0, cpu() - c0);
  memset(&cb, 0, sizeof cb);
  cb.heap_reference_callback = fref; cb.array_primitive_value_callback = arr;
  t0 = now(); c0 = cpu(); n = 0;
  (*J)->FollowReferences(J, 0, NULL, NULL, &cb, NULL);
  fprintf(stderr, "floor: FollowReferences %ld callbacks %.3f s (cpu %.3f)\n", n, now() - t0, cpu() - c0);
}
JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *o, void *r) {
  (*vm)->GetEnv(vm, (void **)&J, JVMTI_VERSION_1_2);
  jvmtiCapabilities c; memset(&c, 0, sizeof c); c.can_tag_objects = 1; (*J)->AddCapabilities(J, &c);
  jvmtiEventCallbacks e; memset(&e, 0, sizeof e); e.DataDumpRequest = dump;
  (*J)->SetEventCallbacks(J, &e, sizeof e);
  (*J)->SetEventNotificationMode(J, JVMTI_ENABLE, JVMTI_EVENT_DATA_DUMP_REQUEST, NULL);
  return 0;
}
