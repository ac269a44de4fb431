//! The JVMTI capabilities by name, so that a hub can derive what to request from what its subscribers
//! declare, and an error can name the ones a JVM refused.

use jvmti_sys as sys;

macro_rules! capability_flags {
    ($($variant:ident => $get:ident, $set:ident;)*) => {
        /// One bit of `jvmtiCapabilities`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum CapabilityFlag {
            $($variant,)*
        }

        impl CapabilityFlag {
            pub const ALL: &'static [CapabilityFlag] = &[$(CapabilityFlag::$variant,)*];

            /// The name the JVMTI specification gives it (`can_tag_objects`).
            pub fn name(self) -> &'static str {
                match self {
                    $(CapabilityFlag::$variant => stringify!($get),)*
                }
            }

            pub fn is_set(self, caps: &sys::jvmtiCapabilities) -> bool {
                match self {
                    $(CapabilityFlag::$variant => caps.$get() != 0,)*
                }
            }

            pub fn set(self, caps: &mut sys::jvmtiCapabilities) {
                match self {
                    $(CapabilityFlag::$variant => caps.$set(1),)*
                }
            }
        }
    };
}

capability_flags! {
    CanTagObjects => can_tag_objects, set_can_tag_objects;
    CanGenerateFieldModificationEvents => can_generate_field_modification_events, set_can_generate_field_modification_events;
    CanGenerateFieldAccessEvents => can_generate_field_access_events, set_can_generate_field_access_events;
    CanGetBytecodes => can_get_bytecodes, set_can_get_bytecodes;
    CanGetSyntheticAttribute => can_get_synthetic_attribute, set_can_get_synthetic_attribute;
    CanGetOwnedMonitorInfo => can_get_owned_monitor_info, set_can_get_owned_monitor_info;
    CanGetCurrentContendedMonitor => can_get_current_contended_monitor, set_can_get_current_contended_monitor;
    CanGetMonitorInfo => can_get_monitor_info, set_can_get_monitor_info;
    CanPopFrame => can_pop_frame, set_can_pop_frame;
    CanRedefineClasses => can_redefine_classes, set_can_redefine_classes;
    CanSignalThread => can_signal_thread, set_can_signal_thread;
    CanGetSourceFileName => can_get_source_file_name, set_can_get_source_file_name;
    CanGetLineNumbers => can_get_line_numbers, set_can_get_line_numbers;
    CanGetSourceDebugExtension => can_get_source_debug_extension, set_can_get_source_debug_extension;
    CanAccessLocalVariables => can_access_local_variables, set_can_access_local_variables;
    CanMaintainOriginalMethodOrder => can_maintain_original_method_order, set_can_maintain_original_method_order;
    CanGenerateSingleStepEvents => can_generate_single_step_events, set_can_generate_single_step_events;
    CanGenerateExceptionEvents => can_generate_exception_events, set_can_generate_exception_events;
    CanGenerateFramePopEvents => can_generate_frame_pop_events, set_can_generate_frame_pop_events;
    CanGenerateBreakpointEvents => can_generate_breakpoint_events, set_can_generate_breakpoint_events;
    CanSuspend => can_suspend, set_can_suspend;
    CanRedefineAnyClass => can_redefine_any_class, set_can_redefine_any_class;
    CanGetCurrentThreadCpuTime => can_get_current_thread_cpu_time, set_can_get_current_thread_cpu_time;
    CanGetThreadCpuTime => can_get_thread_cpu_time, set_can_get_thread_cpu_time;
    CanGenerateMethodEntryEvents => can_generate_method_entry_events, set_can_generate_method_entry_events;
    CanGenerateMethodExitEvents => can_generate_method_exit_events, set_can_generate_method_exit_events;
    CanGenerateAllClassHookEvents => can_generate_all_class_hook_events, set_can_generate_all_class_hook_events;
    CanGenerateCompiledMethodLoadEvents => can_generate_compiled_method_load_events, set_can_generate_compiled_method_load_events;
    CanGenerateMonitorEvents => can_generate_monitor_events, set_can_generate_monitor_events;
    CanGenerateVmObjectAllocEvents => can_generate_vm_object_alloc_events, set_can_generate_vm_object_alloc_events;
    CanGenerateNativeMethodBindEvents => can_generate_native_method_bind_events, set_can_generate_native_method_bind_events;
    CanGenerateGarbageCollectionEvents => can_generate_garbage_collection_events, set_can_generate_garbage_collection_events;
    CanGenerateObjectFreeEvents => can_generate_object_free_events, set_can_generate_object_free_events;
    CanForceEarlyReturn => can_force_early_return, set_can_force_early_return;
    CanGetOwnedMonitorStackDepthInfo => can_get_owned_monitor_stack_depth_info, set_can_get_owned_monitor_stack_depth_info;
    CanGetConstantPool => can_get_constant_pool, set_can_get_constant_pool;
    CanSetNativeMethodPrefix => can_set_native_method_prefix, set_can_set_native_method_prefix;
    CanRetransformClasses => can_retransform_classes, set_can_retransform_classes;
    CanRetransformAnyClass => can_retransform_any_class, set_can_retransform_any_class;
    CanGenerateResourceExhaustionHeapEvents => can_generate_resource_exhaustion_heap_events, set_can_generate_resource_exhaustion_heap_events;
    CanGenerateResourceExhaustionThreadsEvents => can_generate_resource_exhaustion_threads_events, set_can_generate_resource_exhaustion_threads_events;
    CanGenerateEarlyVmstart => can_generate_early_vmstart, set_can_generate_early_vmstart;
    CanGenerateEarlyClassHookEvents => can_generate_early_class_hook_events, set_can_generate_early_class_hook_events;
    CanGenerateSampledObjectAllocEvents => can_generate_sampled_object_alloc_events, set_can_generate_sampled_object_alloc_events;
    CanSupportVirtualThreads => can_support_virtual_threads, set_can_support_virtual_threads;
}

/// An empty capability set.
pub fn no_capabilities() -> sys::jvmtiCapabilities {
    // SAFETY: jvmtiCapabilities is a plain bit-field struct; all zeroes means "no capability".
    unsafe { std::mem::zeroed() }
}

/// The flags set in `caps`, by name, for messages.
pub fn capability_names(caps: &sys::jvmtiCapabilities) -> Vec<&'static str> {
    CapabilityFlag::ALL.iter().filter(|c| c.is_set(caps)).map(|c| c.name()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flag_sets_its_own_bit_only() {
        for &flag in CapabilityFlag::ALL {
            let mut caps = no_capabilities();
            flag.set(&mut caps);
            assert_eq!(capability_names(&caps), vec![flag.name()], "{flag:?}");
        }
    }
}
