#!/bin/sh
# In the guest: loads the modules of /etc/grt-vm/modules.LIST (dependencies first) that are
# not loaded yet; a module that fails says why on a '#' line and the rest go on.
release=$(uname -r)
for list in "$@"; do
	for m in $(cat "/etc/grt-vm/modules.$list"); do
		[ -d "/sys/module/$(echo "${m%.ko}" | tr - _)" ] && continue
		insmod "/lib/modules/$release/$m" 2>/tmp/insmod.err || echo "# insmod $m: $(cat /tmp/insmod.err)"
	done
done
