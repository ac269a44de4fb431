#include <jni.h>
#include <jvmti.h>
