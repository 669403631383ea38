# memcgfs: a FUSE cgroup-v1 memory hierarchy backed by an in-process engine.
# Read top to bottom: variables, then one rule per artifact, then phony targets.

CC       ?= cc
PREFIX   ?= /usr/local
DESTDIR  ?=
BINDIR   ?= $(PREFIX)/bin
SBINDIR  ?= /sbin
MANDIR   ?= $(PREFIX)/share/man
UNITDIR  ?= $(PREFIX)/lib/systemd/system
BUILD    ?= build
SANFLAGS ?=
OPT      ?= -O2 -g
# The one source of the version: the VERSION file (the programs' --version
# and the man page's header, checked by t_mount.sh).
VERSION  := $(shell cat VERSION)
# -MMD: each object's header dependencies, written beside it (.d) and read
# back below, so a header change rebuilds exactly what includes it.
CFLAGS   += -MMD -MP $(OPT) -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wshadow \
            -D_GNU_SOURCE -DMEMCGFS_VERSION='"$(VERSION)"' -Isrc $(CPPFLAGS) $(SANFLAGS)
LDFLAGS  += $(SANFLAGS)
FUSE_CFLAGS  = $(shell pkg-config --cflags fuse3 2>/dev/null)
FUSE_LIBS    = $(shell pkg-config --libs fuse3 2>/dev/null)
CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   = $(shell pkg-config --libs check 2>/dev/null)
# The page-cache tracer (eBPF, src/os/bpf/): built where this machine has
# what it takes (bpftool, libbpf, clang's BPF target, the running kernel's
# BTF for vmlinux.h); elsewhere os/pcache.c says it is not there and the
# daemon counts real processes from /proc alone.
BPF_OK := $(shell command -v bpftool >/dev/null 2>&1 && command -v clang >/dev/null 2>&1 && \
            pkg-config --exists libbpf 2>/dev/null && test -r /sys/kernel/btf/vmlinux && echo 1)
ifeq ($(BPF_OK),1)
BPF_CFLAGS := -DMEMCGFS_BPF -I$(BUILD)/bpf
BPF_LIBS   := $(shell pkg-config --libs libbpf)
endif

# Three floors (docs/design.md): the engine (no FUSE, no I/O), then the
# file surface and the charge sources side by side (with the state
# journal, the OS helpers, replay and the utilities), then the programs.
ENGINE_SRC := $(wildcard src/engine/*.c)
# The files compiled with FUSE's headers: the daemon's main, the
# supervisor that holds the FUSE connection, the FUSE operations.
FUSE_SRC   := src/memcgfs.c src/daemon/supervisor.c src/daemon/ops.c
# What needs no FUSE header and no mount, testable in process: the file
# surface, the state journal, the charge sources, the OS helpers, replay,
# the utilities, and the daemon's heap trimming.
FSLIB_SRC  := $(wildcard src/fs/*.c src/journal/*.c src/source/*.c src/os/*.c src/replay/*.c \
                src/util/*.c) $(filter-out $(FUSE_SRC),$(wildcard src/daemon/*.c))
# The tools bridge (memcgfs-run's modules): a program of the top floor,
# split in parts that talk to memcgfs only through its mount's files.
BRIDGE_SRC := $(wildcard src/bridge/*.c)
ENGINE_OBJ := $(ENGINE_SRC:%.c=$(BUILD)/%.o)
FSLIB_OBJ  := $(FSLIB_SRC:%.c=$(BUILD)/%.o)
UNIT_SRC   := $(wildcard tests/unit/*.c)
TOOLS_SRC  := $(wildcard tests/tools/*.c)
TOOLS      := $(TOOLS_SRC:tests/tools/%.c=$(BUILD)/tools/%)
# memcgfs-run's detectors that no libc hook could reach: cgread linked
# statically, and its Go twin (the Go runtime makes raw system calls).
RUN_TOOLS  := $(BUILD)/tools/cgread-static $(BUILD)/tools/cgread-go $(BUILD)/tools/memhog-static

# Fuzzing (make fuzz): clang's libFuzzer. The engine and the file layer are
# instrumented for coverage and built under ASan+UBSan in their own tree;
# each harness then runs FUZZ_SECONDS on a scratch copy of its corpus.
FUZZ_CC      ?= clang
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 20
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS  := -MMD -MP -O1 -g -fno-omit-frame-pointer -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
                -Wshadow -Wno-gnu-variable-sized-type-not-at-end -D_GNU_SOURCE -DMEMCGFS_VERSION='"$(VERSION)"' -Isrc \
                -fsanitize=fuzzer-no-link $(FUZZ_SAN)
FUZZ_LDFLAGS := -fsanitize=fuzzer $(FUZZ_SAN)
FUZZ_NAMES   := grammar write seq
FUZZ_OBJ     := $(ENGINE_SRC:%.c=$(FUZZ_BUILD)/%.o) $(FSLIB_SRC:%.c=$(FUZZ_BUILD)/%.o)
FUZZ_BINS    := $(FUZZ_NAMES:%=$(FUZZ_BUILD)/fuzz_%)

all: $(BUILD)/memcgfs $(BUILD)/memcgctl $(BUILD)/memcgfs-run $(TOOLS)

# Only the FUSE glue (FUSE_SRC) sees FUSE's headers: "no FUSE below the
# daemon" is the build's rule, not a comment's.
$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

# (and memcgfs-run's server of the stand-in hierarchies)
RUN_FUSE_SRC := src/bridge/standin.c
$(FUSE_SRC:%.c=$(BUILD)/%.o) $(RUN_FUSE_SRC:%.c=$(BUILD)/%.o): $(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(FUSE_CFLAGS) -c -o $@ $<

# The tracer: the kernel's types, the program, and the skeleton that
# embeds it in os/pcache.o.
$(BUILD)/bpf/vmlinux.h:
	@mkdir -p $(dir $@)
	bpftool btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(BUILD)/bpf/pcache.bpf.o: src/os/bpf/pcache.bpf.c src/os/pcache_event.h $(BUILD)/bpf/vmlinux.h
	clang -O2 -g -target bpf -D__TARGET_ARCH_x86 -Wall -I$(BUILD)/bpf -Isrc -c -o $@ $<

$(BUILD)/bpf/pcache.skel.h: $(BUILD)/bpf/pcache.bpf.o
	bpftool gen skeleton $< name pcache_bpf > $@.tmp && mv $@.tmp $@

ifeq ($(BPF_OK),1)
$(BUILD)/src/os/pcache.o: CFLAGS += $(BPF_CFLAGS)
$(BUILD)/src/os/pcache.o: $(BUILD)/bpf/pcache.skel.h
endif

$(BUILD)/libmemcg.a: $(ENGINE_OBJ) $(FSLIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/memcgfs: $(FUSE_SRC:%.c=$(BUILD)/%.o) $(BUILD)/libmemcg.a
	$(CC) $(LDFLAGS) -o $@ $^ $(FUSE_LIBS) $(BPF_LIBS) -lpthread

$(BUILD)/memcgctl: $(BUILD)/src/memcgctl.o $(BUILD)/libmemcg.a
	$(CC) $(LDFLAGS) -o $@ $^ $(BPF_LIBS) -lpthread

$(BUILD)/libbridge.a: $(BRIDGE_SRC:%.c=$(BUILD)/%.o)
	rm -f $@ && ar rcs $@ $^

# memcgfs-run is single-threaded and must stay so: unshare(CLONE_NEWUSER)
# refuses a process with threads, and TSan's runtime starts one. Its parts
# are built without TSan (ASan and UBSan start none and stay).
NO_TSAN = $(filter-out -fsanitize=thread,$(1))
$(BUILD)/src/memcgfs-run.o $(BRIDGE_SRC:%.c=$(BUILD)/%.o): CFLAGS := $(call NO_TSAN,$(CFLAGS))

$(BUILD)/memcgfs-run: $(BUILD)/src/memcgfs-run.o $(BUILD)/libbridge.a
	$(CC) $(call NO_TSAN,$(LDFLAGS)) -o $@ $^ -lseccomp $(FUSE_LIBS)

$(BUILD)/unit_tests: $(UNIT_SRC:%.c=$(BUILD)/%.o) $(BUILD)/libmemcg.a $(BUILD)/libbridge.a
	$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(BPF_LIBS) $(FUSE_LIBS) -lpthread

$(BUILD)/tests/unit/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -c -o $@ $<

# The benchmarks' engine: the same sources with their instruments compiled
# in (MCG_BENCH: the baseline that charges nothing, the naive move); the
# production engine has neither on its charge path.
BENCH_LIB := $(BUILD)/bench-lib
$(BENCH_LIB)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DMCG_BENCH -c -o $@ $<

$(BENCH_LIB)/libmemcg.a: $(ENGINE_SRC:%.c=$(BENCH_LIB)/%.o) $(FSLIB_SRC:%.c=$(BENCH_LIB)/%.o)
	rm -f $@ && ar rcs $@ $^

# The FUSE floor (bench/fuse_floor.sh): a bare server, nothing of ours.
$(BUILD)/fuse_floor: bench/fuse_floor.c
	$(CC) $(OPT) -Wall -Wextra -Wno-unused-parameter $(FUSE_CFLAGS) -o $@ $< $(FUSE_LIBS)

$(BUILD)/bench_%: bench/bench_%.c $(BENCH_LIB)/libmemcg.a
	$(CC) $(CFLAGS) -DMCG_BENCH $(LDFLAGS) -o $@ $^ -lpthread -lm

# The code under test instrumented for libFuzzer (no FUSE header is needed:
# FUSE_SRC, the only files that include one, are left out of FSLIB_SRC).
$(FUZZ_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_BUILD)/libmemcg.a: $(FUZZ_OBJ)
	rm -f $@ && ar rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_BUILD)/libmemcg.a $(wildcard src/*/*.h)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_LDFLAGS) -o $@ $< $(FUZZ_BUILD)/libmemcg.a -lpthread

# Test programs are fixtures, not the code under test: built without the
# sanitizers, so that their memory and threads are what they declare.
$(BUILD)/tools/%: tests/tools/%.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SANFLAGS),$(CFLAGS)) -o $@ $< -lpthread

# A page fault's cost (bench/mirror_idle.sh): a plain program.
$(BUILD)/fault_cost: bench/fault_cost.c
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $<

# memcgfs-run's overhead loop (bench/run_overhead.sh): a plain program.
$(BUILD)/run_openloop: bench/run_openloop.c
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $<

$(BUILD)/tools/cgread-static: tests/tools/cgread.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SANFLAGS),$(CFLAGS)) -static -o $@ $<

# the allocator a container's busybox root runs (t_runtime.sh)
$(BUILD)/tools/memhog-static: tests/tools/memhog.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SANFLAGS),$(CFLAGS)) -static -o $@ $< -lpthread

# Debian's golang-go, offline: no modules, the cache in the build tree.
$(BUILD)/tools/cgread-go: tests/tools/cgread.go
	@mkdir -p $(dir $@)
	cd tests/tools && GOCACHE=$(abspath $(BUILD))/gocache GO111MODULE=off CGO_ENABLED=0 \
	  go build -o $(abspath $@) cgread.go

.PHONY: docfigs bench-docs all check layers unit integration asan tsan fuzz hosts bench install uninstall deb clean deps demo

# Every test: the include rules of the three floors, unit tests (Check),
# then integration tests against a real mount.
check: layers docfigs unit integration

layers:
	tests/layers/check_layers.sh

# every measured figure the docs quote is the committed run's
docfigs:
	python3 bench/docfigs.py --check

unit: $(BUILD)/unit_tests
	CK_FORK=yes $(if $(SANFLAGS),CK_TIMEOUT_MULTIPLIER=10) $(BUILD)/unit_tests

integration: $(BUILD)/memcgfs $(BUILD)/memcgctl $(BUILD)/memcgfs-run $(TOOLS) $(RUN_TOOLS)
	MEMCGFS_BUILD=$(abspath $(BUILD)) $(if $(SANFLAGS),MEMCGFS_SANLOG=$(abspath $(BUILD))/sanlog) \
	  tests/integration/run.sh

# The same tests with the daemon and the units built under ASan+UBSan.
asan:
	$(MAKE) BUILD=build-asan OPT="-O1 -g -fno-omit-frame-pointer" \
	  SANFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined" check

tsan:
	$(MAKE) BUILD=build-tsan OPT="-O1 -g" SANFLAGS="-fsanitize=thread" check

# The host matrix (tests/hosts/run.sh): Debian 12's 6.1 and 6.12 kernels
# booted under qemu with this machine's root read-only, laid out as a host
# with only cgroup2 (HOSTS_CELLS: SERIES/LAYOUT, v1 for the legacy hybrid
# layout), this build's guest tests and a set of its integration tests run
# in each; results in $(BUILD)/hosts.
HOSTS_CELLS ?= 6.1/v2 6.12/v2
hosts: $(BUILD)/memcgfs $(BUILD)/memcgctl $(BUILD)/memcgfs-run $(TOOLS) $(RUN_TOOLS)
	tests/hosts/run.sh $(BUILD) $(HOSTS_CELLS)

# Every harness for FUZZ_SECONDS on a scratch copy of its corpus (the
# committed one never grows); prints fuzz.<name>.execs and .coverage lines
# and fails on any crash, leak, hang or invariant failure.
fuzz: $(FUZZ_BINS)
	tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_NAMES)

# Every benchmark to its end (bench/run.sh, under 15 minutes on 2 cores):
# "name value unit" lines on stdout and in $(BUILD)/bench/results.tsv, the
# report $(BUILD)/bench/report.md and its plots. Not part of check.
BENCH_BINS := $(BUILD)/bench_engine $(BUILD)/bench_charge $(BUILD)/bench_move $(BUILD)/bench_wmark \
              $(BUILD)/bench_scan $(BUILD)/bench_nodes $(BUILD)/bench_b3sim $(BUILD)/bench_b2model

# everything a step runs (mirror_idle.sh runs tools/memhog, evctl and
# fault_cost);
# BENCH_QUICK=1 for the quick run
bench: $(BENCH_BINS) $(BUILD)/memcgfs $(BUILD)/memcgctl $(BUILD)/memcgfs-run $(BUILD)/run_openloop \
       $(BUILD)/fuse_floor $(BUILD)/tools/memhog $(BUILD)/tools/evctl $(BUILD)/fault_cost
	bench/run.sh $(BUILD)

# The last make bench becomes the committed run the docs quote (docs/bench/),
# and every figure the docs quote is rewritten from it.
bench-docs:
	test -s $(BUILD)/bench/results.tsv
	rm -rf docs/bench && mkdir -p docs/bench/plots
	cp $(BUILD)/bench/results.tsv $(BUILD)/bench/steps.tsv $(BUILD)/bench/goals.tsv docs/bench/
	cp $(BUILD)/bench/plots/*.png docs/bench/plots/ 2>/dev/null || true
	python3 bench/report.py docs/bench docs/bench/results.tsv
	python3 bench/docfigs.py --write

# Everything make install puts down, one "mode source destination" a line.
INSTALL_FILES = 0755 $(BUILD)/memcgfs $(BINDIR)/memcgfs \
                0755 $(BUILD)/memcgctl $(BINDIR)/memcgctl \
                0755 $(BUILD)/memcgfs-run $(BINDIR)/memcgfs-run \
                0755 mount-helper/mount.memcgfs $(SBINDIR)/mount.memcgfs \
                0644 docs/memcgfs.8 $(MANDIR)/man8/memcgfs.8 \
                0644 docs/memcgctl.8 $(MANDIR)/man8/memcgctl.8 \
                0644 docs/mount.memcgfs.8 $(MANDIR)/man8/mount.memcgfs.8 \
                0644 docs/memcgfs-run.1 $(MANDIR)/man1/memcgfs-run.1

# (the systemd unit names the installed binary: BINDIR goes into it here)
install: $(BUILD)/memcgfs $(BUILD)/memcgctl $(BUILD)/memcgfs-run
	@set -- $(INSTALL_FILES); while [ $$# -ge 3 ]; do \
	  echo "install -D -m $$1 $$2 $(DESTDIR)$$3"; install -D -m $$1 $$2 $(DESTDIR)$$3 || exit 1; \
	  shift 3; done
	install -d $(DESTDIR)$(UNITDIR)
	sed 's|@BINDIR@|$(BINDIR)|g' mount-helper/memcgfs@.service.in > $(DESTDIR)$(UNITDIR)/memcgfs@.service

uninstall:
	@set -- $(INSTALL_FILES); while [ $$# -ge 3 ]; do \
	  echo "rm -f $(DESTDIR)$$3"; rm -f $(DESTDIR)$$3; shift 3; done
	rm -f $(DESTDIR)$(UNITDIR)/memcgfs@.service

# A Debian package (debhelper; debian/) of the project's files, built in
# $(BUILD)/deb and checked by lintian: $(BUILD)/deb/memcgfs_$(VERSION)_*.deb.
deb:
	rm -rf $(BUILD)/deb && mkdir -p $(BUILD)/deb/memcgfs-$(VERSION)
	git ls-files -z -c -o --exclude-standard | tar --null -T - -cf - | \
	  tar -xf - -C $(BUILD)/deb/memcgfs-$(VERSION)
	cd $(BUILD)/deb/memcgfs-$(VERSION) && dpkg-buildpackage -us -uc -b > ../build.log 2>&1 || \
	  { tail -n 30 ../build.log; exit 1; }
	lintian --fail-on error $(BUILD)/deb/memcgfs_$(VERSION)_*.deb

clean:
	rm -rf build build-asan build-tsan build-fuzz $(BUILD) $(FUZZ_BUILD)

# The header dependencies -MMD wrote (none before the first build).
-include $(shell find $(BUILD) $(FUZZ_BUILD) -name '*.d' 2>/dev/null)

# Debian packages the project needs to build and test (run as root).
DEPS = libfuse3-dev fuse3 check pkg-config acl attr gcc make python3 perl procps util-linux \
       clang libclang-rt-dev libseccomp-dev cgroup-tools openjdk-17-jre-headless golang-go libc6-dev \
       gnuplot-nox systemd man-db debhelper lintian libbpf-dev bpftool crun runc busybox-static jq
# (lxc without its recommends: apparmor's post-install would load profiles
# into the host's kernel; the same for Debian's kernel images, which the
# host matrix boots under qemu (tests/hosts/kernels.sh names the newest of
# each series in the archive), and qemu without its graphical front ends)
DEPS_NO_RECOMMENDS = lxc qemu-system-x86 xz-utils
# Daemons the tests run themselves, each inside memcgfs-run: installed
# without their recommends (apparmor, cgroupfs-mount), neither started by
# their post-install (a policy-rc.d for the install's length, where the
# machine has none) nor enabled at boot: started on the host they would
# make groups in the host's hierarchies
DEPS_DAEMONS = docker.io podman conmon
DEPS_DAEMON_UNITS = docker.service docker.socket containerd.service podman.service podman.socket \
       podman-restart.service podman-auto-update.timer
define DEPS_INSTALL
	@if ! dpkg -s $(DEPS) $(DEPS_NO_RECOMMENDS) $(DEPS_DAEMONS) >/dev/null 2>&1 || \
	    ! tests/hosts/kernels.sh installed; then \
	  apt-get update && k=$$(tests/hosts/kernels.sh packages) && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y $(DEPS) && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
	    $(DEPS_NO_RECOMMENDS) $$k && \
	  { ours=; if [ ! -e /usr/sbin/policy-rc.d ]; then \
	      printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && ours=1; fi; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(DEPS_DAEMONS); rc=$$?; \
	    [ -z "$$ours" ] || rm -f /usr/sbin/policy-rc.d; \
	    systemctl disable $(DEPS_DAEMON_UNITS) >/dev/null 2>&1; exit $$rc; }; fi
endef
deps:
	$(DEPS_INSTALL)

# `make deps GOAL...` on a fresh machine: BPF_OK (above) was probed before
# deps installed what it looks for (bpftool, libbpf), and the other goals
# would build without the page-cache tracer. So the install runs first, as
# the remaking of an included makefile, after which make starts again from
# the top and probes anew; where the tracer cannot be built even then, the
# stamp is up to date and nothing starts again.
ifneq ($(filter deps,$(MAKECMDGOALS)),)
ifneq ($(BPF_OK),1)
-include $(BUILD)/.deps-installed.mk
$(BUILD)/.deps-installed.mk:
	$(DEPS_INSTALL)
	@mkdir -p $(dir $@) && echo '# make deps ran (Makefile: deps)' > $@
endif
endif

demo: all
	mount-helper/memcgfs-demo $(abspath $(BUILD))/memcgfs
