/* Parsing PCI addresses as drivers print them ("0000:3b:00.0", NVML's "00000000:3B:00.0"). */
#ifndef GRT_PCI_ADDR_H
#define GRT_PCI_ADDR_H

#include <stdint.h>

/* grt_pci_pack() of text, or 0 when it is not a PCI address. */
uint32_t grt_pci_parse(const char *text);

#endif
