/*
 * Reads a PCI function's config space through its sysfs file N times, one access per read
 * (dword, word and byte reads at offsets the kernel does not split), then writes the interrupt
 * line register back with the value it holds. Prints every access as "read|write OFFSET SIZE
 * VALUE" so the test can compare them with what the pcie source recorded.
 *
 * usage: pci_config_access /sys/bus/pci/devices/DDDD:BB:DD.F/config N
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define INTERRUPT_LINE 0x3c

static int access_once(int fd, const char *op, unsigned offset, unsigned size, uint32_t *value)
{
	uint8_t bytes[4] = { 0 };
	ssize_t n;

	if (!strcmp(op, "write")) {
		memcpy(bytes, value, size);	/* little-endian, as config space is */
		n = pwrite(fd, bytes, size, offset);
	} else {
		n = pread(fd, bytes, size, offset);
		*value = bytes[0] | bytes[1] << 8 | bytes[2] << 16 | (uint32_t)bytes[3] << 24;
	}
	if (n != (ssize_t)size) {
		perror(op);
		return -1;
	}
	printf("%s 0x%x %u 0x%x\n", op, offset, size, *value);
	return 0;
}

int main(int argc, char **argv)
{
	int fd, n = argc == 3 ? atoi(argv[2]) : -1;
	uint32_t value = 0;

	if (n < 0) {
		fprintf(stderr, "usage: pci_config_access CONFIG_FILE N\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	/* the first 64 bytes (the standard header): dwords, then words, then bytes */
	for (int i = 0; i < n; i++) {
		unsigned size = i % 3 == 0 ? 4 : i % 3 == 1 ? 2 : 1;
		unsigned offset = (i * 4) % 64 / size * size;

		if (access_once(fd, "read", offset, size, &value))
			return 1;
	}
	if (access_once(fd, "read", INTERRUPT_LINE, 1, &value) ||
	    access_once(fd, "write", INTERRUPT_LINE, 1, &value))
		return 1;
	close(fd);
	return 0;
}
