/* Driver entry points interposed only so that the cuda source can record them in-process. */
#ifndef GRT_INJECT_RECORDED_CALLS_H
#define GRT_INJECT_RECORDED_CALLS_H

/*
 * X(name, number of arguments): allocations, frees, event and stream
 * queries, cross-stream waits, name lookups, and the context and device
 * calls that tell which GPU each later call works on. The library has nothing to
 * do around them; their wrappers only record the call (call_record.h). As
 * with work_calls.h, every argument is an integer or a pointer.
 */
#define INJECT_RECORDED_CALLS(X)                                                                   \
	X(cuMemAlloc, 2)                                                                           \
	X(cuMemAlloc_v2, 2)                                                                        \
	X(cuMemAllocAsync, 3)                                                                      \
	X(cuMemAllocAsync_ptsz, 3)                                                                 \
	X(cuMemAllocManaged, 3)                                                                    \
	X(cuMemAllocHost, 2)                                                                       \
	X(cuMemAllocHost_v2, 2)                                                                    \
	X(cuMemHostAlloc, 3)                                                                       \
	X(cuMemAllocPitch, 5)                                                                      \
	X(cuMemAllocPitch_v2, 5)                                                                   \
	X(cuMemAllocFromPoolAsync, 4)                                                              \
	X(cuMemAllocFromPoolAsync_ptsz, 4)                                                         \
	X(cuMemFree, 1)                                                                            \
	X(cuMemFree_v2, 1)                                                                         \
	X(cuMemFreeAsync, 2)                                                                       \
	X(cuMemFreeAsync_ptsz, 2)                                                                  \
	X(cuMemFreeHost, 1)                                                                        \
	X(cuStreamWaitEvent, 3)                                                                    \
	X(cuStreamWaitEvent_ptsz, 3)                                                               \
	X(cuEventRecord, 2)                                                                        \
	X(cuEventRecord_ptsz, 2)                                                                   \
	X(cuEventRecordWithFlags, 3)                                                               \
	X(cuEventRecordWithFlags_ptsz, 3)                                                          \
	X(cuEventQuery, 1)                                                                         \
	X(cuStreamQuery, 1)                                                                        \
	X(cuStreamQuery_ptsz, 1)                                                                   \
	X(cuFuncGetName, 2)                                                                        \
	X(cuCtxCreate_v2, 3)                                                                       \
	X(cuCtxCreate_v4, 4)                                                                       \
	X(cuDevicePrimaryCtxRetain, 2)                                                             \
	X(cuCtxSetCurrent, 1)                                                                      \
	X(cuCtxPushCurrent, 1)                                                                     \
	X(cuCtxPushCurrent_v2, 1)                                                                  \
	X(cuCtxPopCurrent, 1)                                                                      \
	X(cuCtxPopCurrent_v2, 1)                                                                   \
	X(cuDeviceGetPCIBusId, 3)                                                                  \
	X(cuDeviceGetUuid, 2)                                                                      \
	X(cuDeviceGetUuid_v2, 2)

#endif
