/* PCI address text to the packed form the kernel records use. */
#include <stdio.h>
#include "common/pci_addr.h"
#include "trace/records_kernel.h"

uint32_t grt_pci_parse(const char *text)
{
	unsigned domain, bus, dev, fn;
	int end = 0;

	/* the function is one digit; %n makes trailing text an error */
	if (sscanf(text, "%x:%x:%x.%1x%n", &domain, &bus, &dev, &fn, &end) != 4 || text[end] || bus > 0xff ||
	    dev > 0x1f || fn > 7 || domain > 0xffff)
		return 0;
	return grt_pci_pack(domain, bus, dev, fn);
}
