/* PCI address text to the packed form the kernel records use. */
#include <stdio.h>
#include "sources/pci_addr.h"
#include "trace/records_kernel.h"

uint32_t grt_pci_parse(const char *text)
{
	unsigned domain, bus, dev, fn;
	char tail;

	if (sscanf(text, "%x:%x:%x.%x%c", &domain, &bus, &dev, &fn, &tail) != 4 || bus > 0xff ||
	    dev > 0x1f || fn > 7 || domain > 0xffff)
		return 0;
	return grt_pci_pack(domain, bus, dev, fn);
}
