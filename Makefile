# SPDX-License-Identifier: GPL-2.0
# damon-perf: build the patched kernel, boot it under QEMU, run the tests.

.PHONY: all demo check check-full check-rest bench soak fuzz reproduce series base apply export kernel initramfs clean distclean

all: kernel

demo:
	@bash harness/demo.sh

check:
	@bash harness/check.sh check

# everything make check runs, and the kernels and checks it leaves out
check-full:
	@bash harness/check.sh full

# what check-full adds to check, for a tree that make check has just tested
check-rest:
	@bash harness/check.sh rest

# make bench [QUICK=1]
bench:
	@QUICK="$(QUICK)" bash harness/bench.sh

# make soak [STARTS=200] [HOTPLUG=50] [MIXED=0] [AUX_SECONDS=300] [KERNEL=debug|test]
soak:
	@STARTS="$(STARTS)" HOTPLUG="$(HOTPLUG)" MIXED="$(MIXED)" KERNEL="$(KERNEL)" \
		AUX_SECONDS="$(AUX_SECONDS)" PERIOD="$(PERIOD)" bash harness/soak.sh

# make fuzz [SEED=N] [OPS=N] [KERNEL=debug|test]
fuzz:
	@SEED="$(SEED)" OPS="$(OPS)" KERNEL="$(KERNEL)" bash harness/fuzz.sh

reproduce:
	@bash harness/reproduce.sh

series:
	@bash harness/series.sh

base:
	@bash harness/base.sh

apply:
	@bash harness/apply.sh

export:
	@bash harness/export.sh

kernel:
	@bash harness/prepare.sh test Kconfig.damon-perf configs/test.config

initramfs:
	@bash harness/initramfs.sh

clean:
	rm -rf build/obj build/logs build/initramfs build/initramfs.cpio \
		build/initramfs-arm64 build/initramfs-arm64.cpio

distclean:
	rm -rf build
