use crate::env::{Jvmti, jvmti_call};
use crate::error::Result;
use jvmti_sys as sys;
use std::ffi::c_void;

/// The raw callback table for `FollowReferences` / `IterateThroughHeap`. Callbacks run inside a VM
/// operation: they must not call JNI or most JVMTI functions, and must not block on a lock that a Java
/// thread might hold.
pub type HeapCallbacks = sys::jvmtiHeapCallbacks;

impl Jvmti {
    pub fn set_tag(self, object: sys::jobject, tag: i64) -> Result<()> {
        jvmti_call!(self, SetTag, object, tag)
    }

    pub fn tag(self, object: sys::jobject) -> Result<i64> {
        let mut tag: sys::jlong = 0;
        jvmti_call!(self, GetTag, object, &mut tag)?;
        Ok(tag)
    }

    /// Objects carrying any of `tags`, with their tags (local references).
    pub fn objects_with_tags(self, tags: &[i64]) -> Result<Vec<(sys::jobject, i64)>> {
        let mut count: sys::jint = 0;
        let mut objects: *mut sys::jobject = std::ptr::null_mut();
        let mut tag_out: *mut sys::jlong = std::ptr::null_mut();
        jvmti_call!(
            self,
            GetObjectsWithTags,
            tags.len() as sys::jint,
            tags.as_ptr(),
            &mut count,
            &mut objects,
            &mut tag_out
        )?;
        // SAFETY: the JVMTI call succeeded, so `objects` is null or this environment's allocation of as many
        // elements as it said, ours to free.
        let objects = unsafe { self.take_array(objects, count) };
        // SAFETY: the JVMTI call succeeded, so `tag_out` is null or this environment's allocation of as many
        // elements as it said, ours to free.
        let tag_out = unsafe { self.take_array(tag_out, count) };
        Ok(objects.into_iter().zip(tag_out).collect())
    }

    pub fn force_garbage_collection(self) -> Result<()> {
        jvmti_call!(self, ForceGarbageCollection)
    }

    /// 0 reports every allocation through SampledObjectAlloc; otherwise the mean bytes between samples.
    pub fn set_heap_sampling_interval(self, bytes: i32) -> Result<()> {
        jvmti_call!(self, SetHeapSamplingInterval, bytes)
    }

    /// Walks references from the roots (or from `initial_object`).
    ///
    /// # Safety
    /// The callbacks must honour the restrictions of heap callbacks, and `user_data` must be what they expect.
    pub unsafe fn follow_references(
        self,
        heap_filter: i32,
        klass: sys::jclass,
        initial_object: sys::jobject,
        callbacks: &HeapCallbacks,
        user_data: *const c_void,
    ) -> Result<()> {
        jvmti_call!(self, FollowReferences, heap_filter, klass, initial_object, callbacks, user_data)
    }

    /// Visits every object in the heap, reachable or not.
    ///
    /// # Safety
    /// As for [`Jvmti::follow_references`].
    pub unsafe fn iterate_through_heap(
        self,
        heap_filter: i32,
        klass: sys::jclass,
        callbacks: &HeapCallbacks,
        user_data: *const c_void,
    ) -> Result<()> {
        jvmti_call!(self, IterateThroughHeap, heap_filter, klass, callbacks, user_data)
    }
}
