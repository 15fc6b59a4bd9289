# grtrace build: user-space tool, BPF skeletons, inject library, tests.
# `make` builds, `make test` runs every test (plus the sanitizer build), `make demo` records the sample.

BUILD ?= build
V ?= 0
Q := $(if $(filter 1,$(V)),,@)
msg = $(if $(filter 1,$(V)),,@printf '  %-8s %s\n' '$(1)' '$(2)';)

CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
ARCH := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')

WARN := -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers
CFLAGS ?= -O2 -g
ALL_CFLAGS := -std=gnu11 $(WARN) $(CFLAGS) -Isrc -I$(BUILD)/gen -D_GNU_SOURCE -MMD -MP
ifeq ($(SAN),1)
ALL_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
SAN_LDFLAGS := -fsanitize=address,undefined
endif
# libbpf and its ELF/compression helpers are linked statically so the binary
# runs unchanged on machines (the GPU host) that lack them.
# libmicrohttpd (serve's HTTP endpoint) and ncurses (top) are static too; libmicrohttpd's TLS
# half needs GnuTLS, which stays shared: every Debian and Ubuntu system has libgnutls.so.30.
STATIC_LIBS := -Wl,-Bstatic -lbpf -lelf -lz -lzstd -lmicrohttpd -lncursesw -ltinfo -Wl,-Bdynamic
LDLIBS := $(STATIC_LIBS) -lgnutls -lpthread -ldl -lm

# Every directory with BPF programs: NAME.bpf.c beside NAME.c, one skeleton each.
BPF_DIRS := src/sources src/serve
BPF_SRCS := $(foreach d,$(BPF_DIRS),$(wildcard $(d)/*.bpf.c))
BPF_HDRS := $(foreach d,$(BPF_DIRS),$(wildcard $(d)/*.h))
SKELS := $(patsubst %.bpf.c,$(BUILD)/gen/%.skel.h,$(notdir $(BPF_SRCS)))
vpath %.bpf.c $(BPF_DIRS)
LIB_SRCS := $(filter-out %.bpf.c src/cli/main.c,$(wildcard src/common/*.c src/trace/*.c src/sources/*.c src/serve/*.c src/analysis/*.c src/analysis/jobs/*.c src/export/*.c src/cli/*.c))
LIB_SRCS += $(wildcard src/gpubpf/*.c)
LIB_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS))
MAIN_OBJ := $(BUILD)/obj/src/cli/main.o
# the injected library links its own files, the kernel-name filter it shares with record, the
# cuda source's api tables (it records CUDA calls in-process) and the pure-text parts of
# src/gpubpf (it pastes the GPU eBPF programs the recorder translated)
INJECT_SRCS := $(wildcard src/inject/*.c) src/common/kernel_regex.c src/sources/cuda_api.c \
	$(addprefix src/gpubpf/,bpf_attach.c bpf_ptx_forms.c bpf_device.c bpf_session.c)
INJECT_OBJS := $(patsubst %.c,$(BUILD)/pic/%.o,$(INJECT_SRCS))

TEST_SRCS := $(wildcard tests/test_*.c)
TEST_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRCS))

GRTRACE := $(BUILD)/grtrace

# The tool's version (the trace format has its own, in grt_format.h) and the commit built.
VERSION := 0.9.0
GIT_COMMIT = $(shell git describe --always --dirty --abbrev=12 --exclude '*' 2>/dev/null || echo unknown)

.PHONY: all deps test test-unit test-san fuzz demo bench clean format man install
.DELETE_ON_ERROR:
.SECONDARY:

all: $(GRTRACE) $(if $(INJECT_SRCS),$(BUILD)/libgrtrace-inject.so) tests-build

$(BUILD)/gen/vmlinux.h:
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(BUILD)/bpf/%.bpf.o: %.bpf.c $(BUILD)/gen/vmlinux.h $(BPF_HDRS)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Isrc -I$(<D) -Isrc/sources -I$(BUILD)/gen -c $< -o $@

$(BUILD)/gen/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

$(BUILD)/obj/%.o: %.c | $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/pic/%.o: %.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -fno-omit-frame-pointer -c $< -o $@

# Rewritten only when the version or commit changed, so a commit relinks, a build does not.
$(BUILD)/gen/version.h: FORCE
	$(Q)mkdir -p $(@D)
	$(Q)printf '#define GRT_TOOL_VERSION "%s"\n#define GRT_GIT_COMMIT "%s"\n' '$(VERSION)' '$(GIT_COMMIT)' >$@.new
	$(Q)if cmp -s $@.new $@; then rm $@.new; else mv $@.new $@; fi

$(BUILD)/obj/src/cli/main.o $(BUILD)/obj/src/cli/cmd_info.o: $(BUILD)/gen/version.h

.PHONY: FORCE
FORCE:

$(GRTRACE): $(LIB_OBJS) $(MAIN_OBJ)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(SAN_LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/libgrtrace-inject.so: $(INJECT_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(SAN_LDFLAGS) -shared -o $@ $^ -lpthread -ldl -lzstd

$(BUILD)/tests/%: tests/%.c $(LIB_OBJS) tests/test_util.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(LIB_OBJS) $(SAN_LDFLAGS) $(LDLIBS)

# Helper programs the tests need (fake driver, workloads, generators): one .mk per domain.
-include $(wildcard tests/mk/*.mk)

.PHONY: tests-build
tests-build: $(TEST_BINS) $(FIXTURES)

# Man pages, one per command, made from the program's own --help (tools/gen_man.sh).
man: $(GRTRACE)
	$(call msg,MAN,$(BUILD)/man)
	$(Q)./tools/gen_man.sh $(GRTRACE) $(BUILD)/man $(VERSION)

# make install [PREFIX=/usr/local] [DESTDIR=]: the program, the inject library where the
# gpu source looks for it (PREFIX/lib/grtrace), the man pages, bash and zsh completion.
PREFIX ?= /usr/local
BASH_COMPLETION_DIR := $(PREFIX)/share/bash-completion/completions
install: all man
	$(Q)install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/grtrace \
		$(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(BASH_COMPLETION_DIR) \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions
	$(Q)install -m 755 $(GRTRACE) $(DESTDIR)$(PREFIX)/bin/grtrace
	$(Q)install -m 644 $(BUILD)/libgrtrace-inject.so $(DESTDIR)$(PREFIX)/lib/grtrace/
	$(Q)install -m 644 $(BUILD)/man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	$(Q)install -m 644 contrib/completion/grtrace.bash $(DESTDIR)$(BASH_COMPLETION_DIR)/grtrace
	$(Q)sed 's|@BASH_COMPLETION@|$(BASH_COMPLETION_DIR)/grtrace|' contrib/completion/_grtrace \
		>$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_grtrace

deps:
	$(Q)./tools/install-deps.sh

# The whole suite: plain build, then the sanitizer build, then a bounded fuzz run.
test: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)/san SAN=1 all
	$(Q)./tests/run.sh $(BUILD) $(BUILD)/san

test-unit: all
	$(Q)./tests/run.sh $(BUILD)

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)./tools/demo.sh $(BUILD)

format:
	$(Q)clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	$(Q)rm -rf $(BUILD)

-include $(shell find $(BUILD)/obj $(BUILD)/pic -name '*.d' 2>/dev/null)
