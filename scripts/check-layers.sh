#!/usr/bin/env bash
# The layering rules of Documentation/networking/device_drivers/ethernet/rsnic-layers.rst,
# checked on the sources (comments aside): each part may use only what is below it or
# beside it on its side of the hardware line. Prints every violation; fails if there is one.
#   driver  every file outside bus/, hwif/, sim/ and the wiring files (bus.rs, driver.rs,
#           rsnic_main.rs): channel, port, family, xdp, rss, ntuple, devlink, kdma; not the device
#           model (sim/) nor the transports (bus/inkernel/, bus/pci.rs) nor the PCI abstractions; the
#           device through bus.rs only. Within it, from the top: port, channel, the family
#           contract (family.rs, family/: the traits, the vocabulary they speak, the
#           families), then xdp.rs; none uses what is above it
#   bus/inkernel/ bus/pci.rs  the transports, the device's side (the in-kernel device host,
#           real PCI functions): not the
#           driver (channel, port, xdp, family, link, driver)
#   bus.rs  the boundary's kernel side, implemented by the transports: not the driver
#   hwif/     no kernel, no model, no transport: kernel-free, the driver's side of the formats
#   sim/    from hwif/ only the boundary traits (hwif::hw) and the byte order (hwif::bytes, which
#           itself uses nothing of the crate); no kernel, no transport, no driver
# driver.rs is the one place that wires devices to ports, and may use both sides.
set -uo pipefail
cd "$(dirname "$0")/../drivers/net/ethernet/rsnic" || exit

bad=0
# rule PATTERN FILES...: no non-comment line of FILES matches PATTERN.
rule() {
	local pat=$1 hits
	shift
	hits=$(grep -HnE "$pat" "$@" 2>/dev/null | grep -vE '^[^:]+:[0-9]+:\s*//' || true)
	if [ -n "$hits" ]; then
		while IFS= read -r h; do echo "layering: $h"; done <<<"$hits"
		bad=1
	fi
}

mapfile -t family < <(find family -name '*.rs')
mapfile -t channel < <(find channel -name '*.rs')
mapfile -t port < <(find port -name '*.rs')
mapfile -t transport < <(find bus -name '*.rs')
mapfile -t hwif < <(find hwif -name '*.rs')
mapfile -t sim < <(find sim -name '*.rs')
# The driver: every file outside the other parts' folders and the wiring files, so that a new
# driver file is checked without being listed here.
wiring=(bus.rs driver.rs rsnic_main.rs)
mapfile -t driver < <(find . -name '*.rs' -not -path './bus/*' -not -path './hwif/*' \
	-not -path './sim/*' | sed 's|^\./||' | grep -vxF -f <(printf '%s\n' "${wiring[@]}") | sort)
rule '\b(crate::)?(sim|bus::inkernel|bus::pci|inkernel|pci)::|kernel_ext::pci\b' "${driver[@]}"
rule 'crate::port\b' channel.rs "${channel[@]}"
rule 'crate::(channel|port)\b' family.rs "${family[@]}"
rule 'crate::(channel|port|family)\b' xdp.rs
rule 'crate::(channel|port|xdp|family|link|driver)\b' "${transport[@]}" bus.rs
rule '\bkernel::|crate::(sim|kernel_ext|channel|port|family|bus)\b' "${hwif[@]}"
# Every module of hwif/ but hw and bytes is the driver's: sim/ names them one by one (no
# crate::hwif::{...}), so each use is checked.
hwif_driver=$(ls hwif | sed 's/\.rs$//' | grep -vxE 'mod|hw|bytes' | paste -sd'|')
rule "\\bkernel::|crate::(kernel_ext|channel|port|family|bus)\\b|crate::hwif::(\\{|($hwif_driver)\\b)" \
	"${sim[@]}"
# One file: grep prints no file name, so the pattern itself keeps to code before any comment.
rule '^[^/]*\b(crate|super)::' hwif/bytes.rs
[ "$bad" = 0 ] && echo "layering: ok (driver, bus and its transports, hwif, sim)"
exit "$bad"
