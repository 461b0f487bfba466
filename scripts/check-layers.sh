#!/usr/bin/env bash
# The layering rules of Documentation/networking/device_drivers/ethernet/rsnic-layers.rst,
# checked on the sources (comments aside): each part may use only what is below it or
# beside it on its side of the hardware line. Prints every violation; fails if there is one.
#   driver  channel.rs port.rs xdp.rs family.rs family/ kdma.rs: not the device
#           model (sim/) nor its hosts (host/, pcidev.rs, realpci.rs) nor the PCI
#           abstractions; the device through bus.rs only
#   host/ pcidev.rs realpci.rs  the device's side (in-kernel host, ivshmem transport, real
#           PCI functions): not the driver (channel, port, xdp, family, link, driver)
#   bus.rs  the boundary's kernel side, implemented by the host: not the driver
#   dp/     no kernel, no model, no host: kernel-free, the driver's side of the formats
#   sim/    from dp/ only the boundary traits (dp::hw); no kernel, no host, no driver
# driver.rs is the one place that wires devices to ports, and may use both sides.
set -uo pipefail
cd "$(dirname "$0")/../drivers/net/ethernet/rsnic"

bad=0
# rule PATTERN FILES...: no non-comment line of FILES matches PATTERN.
rule() {
	local pat=$1 hits
	shift
	hits=$(grep -nE "$pat" "$@" 2>/dev/null | grep -vE '^[^:]+:[0-9]+:\s*//' || true)
	if [ -n "$hits" ]; then
		echo "$hits" | sed 's/^/layering: /'
		bad=1
	fi
}

driver=(channel.rs port.rs xdp.rs family.rs kdma.rs $(find family -name '*.rs'))
rule '\b(crate::)?(sim|host|pcidev|realpci)::|kernel_ext::pci\b' "${driver[@]}"
rule 'crate::(channel|port|xdp|family|link|driver)\b' $(find host -name '*.rs') pcidev.rs realpci.rs bus.rs
rule '\bkernel::|crate::(sim|host|kernel_ext|channel|port|family|bus)\b' $(find dp -name '*.rs')
rule '\bkernel::|crate::(host|kernel_ext|channel|port|family|bus)\b|crate::dp::(mlx5|mana|pkt|hdr)\b' \
	$(find sim -name '*.rs')
[ "$bad" = 0 ] && echo "layering: ok (driver, host, pcidev, realpci, bus, dp, sim)"
exit "$bad"
