/* CRC-32C (Castagnoli): the trace format's integrity checksum. */
#ifndef GRT_CRC32C_H
#define GRT_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/*
 * Continues crc (0 to start) over len bytes. The SSE4.2 crc32 instruction
 * where the CPU has it, a table otherwise: the same values either way.
 */
uint32_t crc32c_update(uint32_t crc, const void *data, size_t len);

#endif
