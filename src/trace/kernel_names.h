/* Names for the kernel records' numbers: syscalls, NVIDIA driver operations, fence events. */
#ifndef GRT_KERNEL_NAMES_H
#define GRT_KERNEL_NAMES_H

#include <stdint.h>

/* Syscall numbers are x86-64's; the table covers 0..GRT_SYSCALL_TABLE_SIZE-1. */
#define GRT_SYSCALL_TABLE_SIZE 512

extern const char *const grt_syscall_names_x86_64[GRT_SYSCALL_TABLE_SIZE];

/* The name of nr, or NULL for a number without one (callers print "syscall_N"). */
const char *grt_syscall_name(uint32_t nr);
/* The number of a syscall name ("ioctl"), or -1 when unknown. */
int grt_syscall_nr(const char *name);

/* "nvidiactl", "nvidia-gpu", "nvidia-uvm", ... for enum grt_nv_device. */
const char *grt_nv_device_name(uint32_t device);
/*
 * The operation name of an NVIDIA ioctl: "NV_ESC_RM_ALLOC", "UVM_INITIALIZE".
 * NULL when the number is not one the decoder knows (callers print the number).
 */
const char *grt_nv_op_name(uint32_t device, uint32_t op);

const char *grt_fence_event_name(uint32_t event);

#endif
