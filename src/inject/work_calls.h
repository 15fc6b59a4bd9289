/* Driver entry points that put work on the device besides kernel launches: copies, memsets, graphs. */
#ifndef GRT_INJECT_WORK_CALLS_H
#define GRT_INJECT_WORK_CALLS_H

/*
 * X(name, number of arguments). Every argument of these is an integer or a
 * pointer, so one wrapper per argument count forwards them unchanged (the
 * 32-bit variants of the unsuffixed legacy names included: the callee reads
 * the low half of the register). The wrappers only stamp the call's bracket
 * (call_bracket.h) around the real function.
 */
#define INJECT_WORK_CALLS(X)                                                                       \
	X(cuMemcpy, 3)                                                                             \
	X(cuMemcpy_ptds, 3)                                                                        \
	X(cuMemcpyAsync, 4)                                                                        \
	X(cuMemcpyAsync_ptsz, 4)                                                                   \
	X(cuMemcpyHtoD, 3)                                                                         \
	X(cuMemcpyHtoD_v2, 3)                                                                      \
	X(cuMemcpyHtoD_v2_ptds, 3)                                                                 \
	X(cuMemcpyDtoH, 3)                                                                         \
	X(cuMemcpyDtoH_v2, 3)                                                                      \
	X(cuMemcpyDtoH_v2_ptds, 3)                                                                 \
	X(cuMemcpyDtoD, 3)                                                                         \
	X(cuMemcpyDtoD_v2, 3)                                                                      \
	X(cuMemcpyDtoD_v2_ptds, 3)                                                                 \
	X(cuMemcpyHtoDAsync, 4)                                                                    \
	X(cuMemcpyHtoDAsync_v2, 4)                                                                 \
	X(cuMemcpyHtoDAsync_v2_ptsz, 4)                                                            \
	X(cuMemcpyDtoHAsync, 4)                                                                    \
	X(cuMemcpyDtoHAsync_v2, 4)                                                                 \
	X(cuMemcpyDtoHAsync_v2_ptsz, 4)                                                            \
	X(cuMemcpyDtoDAsync, 4)                                                                    \
	X(cuMemcpyDtoDAsync_v2, 4)                                                                 \
	X(cuMemcpyDtoDAsync_v2_ptsz, 4)                                                            \
	X(cuMemcpyDtoA, 4)                                                                         \
	X(cuMemcpyDtoA_v2, 4)                                                                      \
	X(cuMemcpyDtoA_v2_ptds, 4)                                                                 \
	X(cuMemcpyAtoD, 4)                                                                         \
	X(cuMemcpyAtoD_v2, 4)                                                                      \
	X(cuMemcpyAtoD_v2_ptds, 4)                                                                 \
	X(cuMemcpyHtoA, 4)                                                                         \
	X(cuMemcpyHtoA_v2, 4)                                                                      \
	X(cuMemcpyHtoA_v2_ptds, 4)                                                                 \
	X(cuMemcpyAtoH, 4)                                                                         \
	X(cuMemcpyAtoH_v2, 4)                                                                      \
	X(cuMemcpyAtoH_v2_ptds, 4)                                                                 \
	X(cuMemcpyAtoA, 5)                                                                         \
	X(cuMemcpyAtoA_v2, 5)                                                                      \
	X(cuMemcpyAtoA_v2_ptds, 5)                                                                 \
	X(cuMemcpyHtoAAsync, 5)                                                                    \
	X(cuMemcpyHtoAAsync_v2, 5)                                                                 \
	X(cuMemcpyHtoAAsync_v2_ptsz, 5)                                                            \
	X(cuMemcpyAtoHAsync, 5)                                                                    \
	X(cuMemcpyAtoHAsync_v2, 5)                                                                 \
	X(cuMemcpyAtoHAsync_v2_ptsz, 5)                                                            \
	X(cuMemcpyPeer, 5)                                                                         \
	X(cuMemcpyPeer_ptds, 5)                                                                    \
	X(cuMemcpyPeerAsync, 6)                                                                    \
	X(cuMemcpyPeerAsync_ptsz, 6)                                                               \
	X(cuMemcpy2D, 1)                                                                           \
	X(cuMemcpy2D_v2, 1)                                                                        \
	X(cuMemcpy2D_v2_ptds, 1)                                                                   \
	X(cuMemcpy2DUnaligned, 1)                                                                  \
	X(cuMemcpy2DUnaligned_v2, 1)                                                               \
	X(cuMemcpy2DUnaligned_v2_ptds, 1)                                                          \
	X(cuMemcpy2DAsync, 2)                                                                      \
	X(cuMemcpy2DAsync_v2, 2)                                                                   \
	X(cuMemcpy2DAsync_v2_ptsz, 2)                                                              \
	X(cuMemcpy3D, 1)                                                                           \
	X(cuMemcpy3D_v2, 1)                                                                        \
	X(cuMemcpy3D_v2_ptds, 1)                                                                   \
	X(cuMemcpy3DAsync, 2)                                                                      \
	X(cuMemcpy3DAsync_v2, 2)                                                                   \
	X(cuMemcpy3DAsync_v2_ptsz, 2)                                                              \
	X(cuMemcpy3DPeer, 1)                                                                       \
	X(cuMemcpy3DPeer_ptds, 1)                                                                  \
	X(cuMemcpy3DPeerAsync, 2)                                                                  \
	X(cuMemcpy3DPeerAsync_ptsz, 2)                                                             \
	X(cuMemcpyBatchAsync, 9)                                                                   \
	X(cuMemcpyBatchAsync_ptsz, 9)                                                              \
	X(cuMemcpyBatchAsync_v2, 8)                                                                \
	X(cuMemcpyBatchAsync_v2_ptsz, 8)                                                           \
	X(cuMemcpy3DBatchAsync, 5)                                                                 \
	X(cuMemcpy3DBatchAsync_ptsz, 5)                                                            \
	X(cuMemcpy3DBatchAsync_v2, 4)                                                              \
	X(cuMemcpy3DBatchAsync_v2_ptsz, 4)                                                         \
	X(cuMemsetD8, 3)                                                                           \
	X(cuMemsetD8_v2, 3)                                                                        \
	X(cuMemsetD8_v2_ptds, 3)                                                                   \
	X(cuMemsetD16, 3)                                                                          \
	X(cuMemsetD16_v2, 3)                                                                       \
	X(cuMemsetD16_v2_ptds, 3)                                                                  \
	X(cuMemsetD32, 3)                                                                          \
	X(cuMemsetD32_v2, 3)                                                                       \
	X(cuMemsetD32_v2_ptds, 3)                                                                  \
	X(cuMemsetD8Async, 4)                                                                      \
	X(cuMemsetD8Async_ptsz, 4)                                                                 \
	X(cuMemsetD16Async, 4)                                                                     \
	X(cuMemsetD16Async_ptsz, 4)                                                                \
	X(cuMemsetD32Async, 4)                                                                     \
	X(cuMemsetD32Async_ptsz, 4)                                                                \
	X(cuMemsetD2D8, 5)                                                                         \
	X(cuMemsetD2D8_v2, 5)                                                                      \
	X(cuMemsetD2D8_v2_ptds, 5)                                                                 \
	X(cuMemsetD2D16, 5)                                                                        \
	X(cuMemsetD2D16_v2, 5)                                                                     \
	X(cuMemsetD2D16_v2_ptds, 5)                                                                \
	X(cuMemsetD2D32, 5)                                                                        \
	X(cuMemsetD2D32_v2, 5)                                                                     \
	X(cuMemsetD2D32_v2_ptds, 5)                                                                \
	X(cuMemsetD2D8Async, 6)                                                                    \
	X(cuMemsetD2D8Async_ptsz, 6)                                                               \
	X(cuMemsetD2D16Async, 6)                                                                   \
	X(cuMemsetD2D16Async_ptsz, 6)                                                              \
	X(cuMemsetD2D32Async, 6)                                                                   \
	X(cuMemsetD2D32Async_ptsz, 6)                                                              \
	X(cuGraphLaunch, 2)                                                                        \
	X(cuGraphLaunch_ptsz, 2)                                                                   \
	X(cuLaunchCooperativeKernelMultiDevice, 3)

#endif
