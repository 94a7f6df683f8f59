# heapwalk - plain, non-recursive Makefile.  Sources are found by wildcard.
#
#   make            build/heapwalk (optimised, with debug info); installs nothing
#   make deps       install the missing Debian packages (apt-get; sudo if not root)
#   make check      deps, ASan/UBSan build, every test; ends "N passed, N failed"
#                   (T="t0100 t02": only those tests, by name or prefix)
#   make check-reports  every command's output on the corpus, this tree
#                   against REV (default HEAD), byte for byte: the check of a
#                   refactor (scripts/report-compare.sh; after make check)
#   make demo       deps, build, analyse a sample core made from corpora/
#   make bench      the big-heap benchmark: cores of eleven heap shapes (bigheap,
#                   >= 1 GiB and >= 10M chunks, and ten others; BENCH_SHAPES
#                   picks some, scripts/bench.sh), gdb's heap on each
#                   (scripts/bench/gdb-heap.sh), prof (prof-bench.sh), a fleet
#                   of the corpus's cores triaged (triage-bench.sh), then a
#                   live process of that size (scripts/bench/live-big.sh)
#   make bench-live 1000 attach/analyse/detach cycles of --pid on a busy
#                   16-thread program (scripts/bench/live-cycles.sh; minutes),
#                   then 2000 --pid runs signalled at random moments, every
#                   CPU busy beside (scripts/bench/live-signals.sh)
#   make clean-bench  remove the benchmark's cores (several GiB)
#   make fuzz       the libFuzzer harnesses (tests/fuzz/), FUZZ_TIME seconds
#                   each (default 600); corpora kept in build/fuzz/corpus-NAME,
#                   crashes in build/fuzz/artifacts-NAME/ (needs clang)
#   make install    heapwalk, libheapwalk (shared, static, header, pkg-config
#                   file), the gdb plugin, man pages and bash completion under
#                   PREFIX (/usr/local), or DESTDIR/PREFIX; BINDIR, LIBDIR,
#                   INCLUDEDIR, DATADIR, MANDIR, PLUGINDIR as usual
#   make uninstall  remove them again

CC      ?= cc
BUILD   := build
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
LIBDIR  ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATADIR ?= $(PREFIX)/share
MANDIR  ?= $(DATADIR)/man
PLUGINDIR ?= $(LIBDIR)/heapwalk
# libprotobuf-c and zlib write pprof's gzipped profile.proto (prof
# --format=pprof); protoc-c generates its C code at build time.  libzstd,
# liblzma, zlib and liblz4 read compressed cores (target/unpack*.c).
PKGS    := libdw libelf libprotobuf-c zlib libzstd liblzma liblz4
# Recursive (=) so pkg-config runs after the deps target installed it.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS   = $(shell pkg-config --libs $(PKGS))
# The C++ runtime, for its demangler (__cxa_demangle: analysis/vtype.c
# names C++ classes).
CXXRT   := -lstdc++
# libm, for jemalloc's profile arithmetic (exp, round: alloc/jemalloc/prof.c).
LIBM    := -lm

WARN    := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wstrict-prototypes \
           -Wold-style-definition -Wvla -Wpointer-arith -Wundef \
           -Wmissing-prototypes -Wno-format-nonliteral
STD     := -std=c11 -D_GNU_SOURCE -Ilibheapwalk -I$(BUILD)/gen -pthread
CFLAGS  ?= -O2 -g
SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

# libheapwalk/link/: the public calls whose arguments changed, as a
# static link (static.c) and the shared library (shared.c: every version)
# export them; the shared library is linked without static.c.
LIB_SRC := $(shell find libheapwalk -name '*.c' -not -path 'libheapwalk/cli/*' \
	     -not -path 'libheapwalk/link/shared.c' | sort)
CLI_SRC := $(sort $(wildcard libheapwalk/cli/*.c))
# Code generated from a schema (protoc-c), under $(BUILD)/gen, never in
# the tree: commands/prof/pprof.proto, pprof's profile messages.
PROTO   := libheapwalk/commands/prof/pprof.proto
GEN_SRC := $(BUILD)/gen/pprof.pb-c.c
GEN_HDR := $(BUILD)/gen/pprof.pb-c.h
# Another protobuf-c may generate code that warns: not made an error.
GEN_WARN = $(filter-out -Werror,$(WARN))
HDRS    := $(shell find libheapwalk -name '*.h') $(GEN_HDR)
# Manual pages (doc/NAME.SECTION) and the bash completion, as installed.
MANPAGES   := $(wildcard doc/*.1 doc/*.7)
COMPLETION := $(wildcard scripts/completion/heapwalk.bash)
TOOLS   := $(patsubst tests/tools/%.c,$(BUILD)/tools/%,$(wildcard tests/tools/*.c))

LIB_OBJ      := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRC))
# The gdb plugin links a position-independent copy, built with -fexceptions:
# gdb throws C++ exceptions through it (plugin/reader.c).  Its one C++
# function catches gdb's Ctrl-C (plugin/guard.h).
LIB_OBJ_PIC  := $(patsubst %.c,$(BUILD)/pic/obj/%.o,$(LIB_SRC))
PLUGIN_SRC   := plugin/reader.c plugin/gdbtext.c plugin/echo.c plugin/probe.c \
                plugin/coremap.c plugin/ctrlc.c plugin/reask.c
PLUGIN_HDRS  := $(wildcard plugin/*.h)
PIC          := -fPIC -fexceptions
PLUGIN       := $(BUILD)/plugin/heapwalk-gdb.so $(BUILD)/plugin/heapwalk.gdb
# The shared library: SONAME libheapwalk.so.$(SOMAJOR); it exports
# heapwalk.h's functions only (libheapwalk/libheapwalk.map).
SOMAJOR      := 0
SHLIB        := $(BUILD)/libheapwalk.so.$(SOMAJOR)
LIB_OBJ_ASAN := $(patsubst %.c,$(BUILD)/asan/obj/%.o,$(LIB_SRC))
# The libFuzzer harnesses (tests/fuzz/NAME.c) link a clang-built copy of
# the library: -fsanitize=fuzzer needs clang, and the library must carry
# its coverage instrumentation (fuzzer-no-link) for the search to see it.
FUZZ_CC      ?= clang
FUZZ_TIME    ?= 600
# clang's -Wstring-concatenation flags tables of long messages split
# over lines (alloc/ptmalloc/era.c), which gcc's WARN accepts.
FUZZ_WARN    := $(WARN) -Wno-string-concatenation
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all \
                -fno-omit-frame-pointer
LIB_OBJ_FUZZ := $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(LIB_SRC))
FUZZERS      := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/fuzz-*.c))
# The generated code is part of every copy of the library.
GEN_BASE     := $(patsubst $(BUILD)/gen/%.c,%.o,$(GEN_SRC))
LIB_OBJ      += $(addprefix $(BUILD)/obj/gen/,$(GEN_BASE))
LIB_OBJ_PIC  += $(addprefix $(BUILD)/pic/obj/gen/,$(GEN_BASE))
LIB_OBJ_ASAN += $(addprefix $(BUILD)/asan/obj/gen/,$(GEN_BASE))
LIB_OBJ_FUZZ += $(addprefix $(BUILD)/fuzz/obj/gen/,$(GEN_BASE))

.PHONY: FORCE all deps libs gdbheader check check-slow check-reports demo bench bench-live clean clean-bench test \
        install uninstall fuzz fuzzers
all: $(BUILD)/heapwalk $(PLUGIN) $(SHLIB)

# The version, and the git revision it was built from (heapwalk --version):
# rewritten only when it changes, so that a new commit relinks the tool
# and nothing else.
VERSION := $(shell sed -n 's/^\#define HEAPWALK_VERSION "\(.*\)"/\1/p' libheapwalk/heapwalk.h)
GIT_REV := $(shell git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
$(BUILD)/gen/revision.h: FORCE
	@mkdir -p $(dir $@)
	@echo '#define HEAPWALK_REVISION "$(GIT_REV)"' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
FORCE:
$(BUILD)/obj/libheapwalk/cli/heapwalk.o $(BUILD)/asan/obj/libheapwalk/cli/heapwalk.o: \
	$(BUILD)/gen/revision.h

deps:
	@scripts/setup-deps.sh

# Plain `make` installs nothing: it only says what is missing.
libs:
	@command -v pkg-config >/dev/null 2>&1 || { echo "heapwalk: pkg-config \
	not found (Debian: apt-get install pkg-config, or 'make deps')" >&2; \
	exit 1; }
	@pkg-config --exists $(PKGS) || { echo "heapwalk: needs elfutils' \
	libdw and libelf, libprotobuf-c, zlib, libzstd, liblzma and liblz4 \
	with their headers (Debian: apt-get install libdw-dev libelf-dev \
	libprotobuf-c-dev zlib1g-dev libzstd-dev liblzma-dev liblz4-dev, \
	or 'make deps')" >&2; exit 1; }
	@command -v protoc-c >/dev/null 2>&1 || { echo "heapwalk: needs \
	protoc-c (Debian: apt-get install protobuf-c-compiler, or 'make \
	deps')" >&2; exit 1; }

$(GEN_SRC) $(GEN_HDR) &: $(PROTO) | libs
	@mkdir -p $(BUILD)/gen
	@echo "  PROTOC  $<"
	@protoc-c --proto_path=$(dir $<) --c_out=$(BUILD)/gen $(notdir $<)

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c $(GEN_HDR) | libs
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(STD) $(GEN_WARN) $(CFLAGS) $(PKG_CFLAGS) -c -o $@ $<

$(BUILD)/asan/obj/gen/%.o: $(BUILD)/gen/%.c $(GEN_HDR) | libs
	@mkdir -p $(dir $@)
	@echo "  CC/SAN  $<"
	@$(CC) $(STD) $(GEN_WARN) -O1 -g $(SAN) $(PKG_CFLAGS) -c -o $@ $<

$(BUILD)/pic/obj/gen/%.o: $(BUILD)/gen/%.c $(GEN_HDR) | libs
	@mkdir -p $(dir $@)
	@echo "  CC/PIC  $<"
	@$(CC) $(STD) $(GEN_WARN) $(CFLAGS) $(PIC) $(PKG_CFLAGS) -c -o $@ $<

$(BUILD)/fuzz/obj/gen/%.o: $(BUILD)/gen/%.c $(GEN_HDR) | libs
	@mkdir -p $(dir $@)
	@echo "  CC/FUZZ $<"
	@$(FUZZ_CC) $(STD) $(filter-out -Werror,$(FUZZ_WARN)) -O1 -g $(FUZZ_SAN) \
	  -fsanitize=fuzzer-no-link $(PKG_CFLAGS) -c -o $@ $<

$(BUILD)/obj/%.o: %.c $(HDRS) | libs
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(STD) $(WARN) $(CFLAGS) $(PKG_CFLAGS) -c -o $@ $<

$(BUILD)/asan/obj/%.o: %.c $(HDRS) | libs
	@mkdir -p $(dir $@)
	@echo "  CC/SAN  $<"
	@$(CC) $(STD) $(WARN) -O1 -g $(SAN) $(PKG_CFLAGS) -c -o $@ $<

$(BUILD)/pic/obj/%.o: %.c $(HDRS) | libs
	@mkdir -p $(dir $@)
	@echo "  CC/PIC  $<"
	@$(CC) $(STD) $(WARN) $(CFLAGS) $(PIC) $(PKG_CFLAGS) -c -o $@ $<

gdbheader:
	@test -f /usr/include/gdb/jit-reader.h || { echo "heapwalk: the gdb \
	plugin needs gdb's jit-reader.h (Debian: apt-get install gdb, or \
	'make deps')" >&2; exit 1; }

$(BUILD)/pic/libheapwalk.a: $(LIB_OBJ_PIC)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/plugin/guard.o: plugin/guard.cc plugin/guard.h | gdbheader
	@mkdir -p $(dir $@)
	$(CXX) -std=c++11 -Wall -Wextra -Werror $(CFLAGS) -fPIC -c -o $@ $<

$(BUILD)/plugin/heapwalk-gdb.so: $(PLUGIN_SRC) $(PLUGIN_HDRS) plugin/exports.map \
		$(BUILD)/plugin/guard.o $(BUILD)/pic/libheapwalk.a \
		libheapwalk/heapwalk.h | gdbheader
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(WARN) $(CFLAGS) $(PIC) -shared -o $@ $(PLUGIN_SRC) \
	  $(BUILD)/plugin/guard.o $(BUILD)/pic/libheapwalk.a \
	  -Wl,--version-script=plugin/exports.map -Wl,-z,defs $(PKG_LIBS) \
	  -lstdc++ $(LIBM)

$(BUILD)/plugin/gen-script: plugin/gen-script.c $(BUILD)/libheapwalk.a
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(WARN) $(CFLAGS) -o $@ $^ $(PKG_LIBS) $(CXXRT) $(LIBM)

# The script names the reader by its absolute path: jit-reader-load
# looks a relative name up only in gdb's jit-reader-directory (gdb's own
# lib/gdb), so an absolute one works wherever gdb was installed.
# $(call gdb_script,READER,SCRIPT,OUT): the script for a reader at READER.
gdb_script = sed -e 's|@READER@|$(1)|' -e 's|@SCRIPT@|$(2)|' \
	plugin/heapwalk.gdb.in > $(3).tmp && \
	$(BUILD)/plugin/gen-script >> $(3).tmp && mv $(3).tmp $(3)

$(BUILD)/plugin/heapwalk.gdb: plugin/heapwalk.gdb.in $(BUILD)/plugin/gen-script
	$(call gdb_script,$(abspath $(BUILD)/plugin/heapwalk-gdb.so),$(abspath $@),$@)

$(BUILD)/libheapwalk.a: $(LIB_OBJ)
	rm -f $@ && ar rcs $@ $^

SHLIB_OBJ := $(filter-out $(BUILD)/pic/obj/libheapwalk/link/static.o,$(LIB_OBJ_PIC)) \
	     $(BUILD)/pic/obj/libheapwalk/link/shared.o
$(SHLIB): $(SHLIB_OBJ) libheapwalk/libheapwalk.map
	$(CC) $(CFLAGS) -shared -pthread -o $@ $(SHLIB_OBJ) \
	  -Wl,-soname,libheapwalk.so.$(SOMAJOR) \
	  -Wl,--version-script=libheapwalk/libheapwalk.map -Wl,-z,defs \
	  $(PKG_LIBS) -lstdc++ $(LIBM)
	ln -sf libheapwalk.so.$(SOMAJOR) $(BUILD)/libheapwalk.so

# pkg-config's file, for the paths install puts things at (made by
# install: PREFIX and LIBDIR may differ from the build's).
pc_file = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	  -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	  -e 's|@PKGS@|$(PKGS)|' libheapwalk/heapwalk.pc.in > $(1)

$(BUILD)/asan/libheapwalk.a: $(LIB_OBJ_ASAN)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/heapwalk: $(patsubst %.c,$(BUILD)/obj/%.o,$(CLI_SRC)) $(BUILD)/libheapwalk.a
	$(CC) $(CFLAGS) -pthread -o $@ $^ $(PKG_LIBS) $(CXXRT) $(LIBM)

$(BUILD)/asan/heapwalk: $(patsubst %.c,$(BUILD)/asan/obj/%.o,$(CLI_SRC)) $(BUILD)/asan/libheapwalk.a
	$(CC) -g $(SAN) -pthread -o $@ $^ $(PKG_LIBS) $(CXXRT) $(LIBM)

$(BUILD)/fuzz/obj/%.o: %.c $(HDRS) | libs
	@mkdir -p $(dir $@)
	@echo "  CC/FUZZ $<"
	@$(FUZZ_CC) $(STD) $(FUZZ_WARN) -O1 -g $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
	  $(PKG_CFLAGS) -c -o $@ $<

$(BUILD)/fuzz/libheapwalk.a: $(LIB_OBJ_FUZZ)
	rm -f $@ && ar rcs $@ $^

$(FUZZERS): $(BUILD)/fuzz/%: tests/fuzz/%.c $(wildcard tests/fuzz/*.h) \
		tests/tools/strictjson.h \
		$(BUILD)/fuzz/libheapwalk.a libheapwalk/heapwalk.h
	$(FUZZ_CC) $(STD) $(FUZZ_WARN) -O1 -g $(FUZZ_SAN) -fsanitize=fuzzer -o $@ \
	  $< $(BUILD)/fuzz/libheapwalk.a $(PKG_LIBS) $(CXXRT) $(LIBM)

fuzzers: $(FUZZERS)

$(BUILD)/tools/%: tests/tools/%.c $(wildcard tests/tools/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(WARN) -O2 -g -o $@ $<

# The tests run the sanitized build: a core is untrusted input.
# The set-up first, then the builds (a sub-make, so that pkg-config runs
# after the set-up installed it).
# The fuzz harnesses only where clang has libFuzzer (t0222 says why not).
# `make check T="t0100 t02"` runs only the tests named (names or
# prefixes); the fuzz harnesses are then built only for t0222.
T ?=
check test: deps
	@$(MAKE) --no-print-directory $(BUILD)/asan/heapwalk $(TOOLS) $(PLUGIN)
	@fuzz=; [ -n "$(T)" ] || fuzz=1; \
	 for w in $(T); do case t0222-fuzz-smoke.sh in "$${w##*/}"*) fuzz=1;; esac; done; \
	 if [ -n "$$fuzz" ] && FUZZ_CC=$(FUZZ_CC) tests/fuzz/have-libfuzzer.sh; then \
	  $(MAKE) --no-print-directory fuzzers; fi
	@HEAPWALK=$(abspath $(BUILD)/asan/heapwalk) TOOLS=$(abspath $(BUILD)/tools) \
	 FUZZ=$(abspath $(BUILD)/fuzz) BUILDDIR=$(abspath $(BUILD)) \
	 GDB_SCRIPT=$(abspath $(BUILD)/plugin/heapwalk.gdb) \
	 CORPUS=$(abspath $(BUILD)/corpus) TOP=$(CURDIR) tests/run.sh $(T)

# The tests whose set-up takes minutes on a fresh machine (cross-building a
# prof-enabled aarch64 jemalloc: tests/t0442); `make check` runs them only
# once that set-up is cached, and says so when it skips them.
check-slow: deps
	@$(MAKE) --no-print-directory $(BUILD)/asan/heapwalk $(TOOLS)
	@HEAPWALK_SLOW=1 HEAPWALK=$(abspath $(BUILD)/asan/heapwalk) \
	 TOOLS=$(abspath $(BUILD)/tools) CORPUS=$(abspath $(BUILD)/corpus) \
	 TOP=$(CURDIR) tests/run.sh t0442

# A refactor of the reports changes no byte of their output: every
# command, text and JSON, on the corpus `make check` made, this tree's
# build against REV's (built in a worktree).  Minutes: not in check.
REV ?= HEAD
check-reports: deps
	@scripts/report-compare.sh $(REV)

# Installs the tool and the gdb plugin (the reader and the script that
# names it where it is installed: `source $(DATADIR)/heapwalk/heapwalk.gdb`
# in gdb).  DESTDIR is a staging root: the paths inside are without it.
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(PLUGINDIR) \
		$(DESTDIR)$(DATADIR)/heapwalk $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(INCLUDEDIR)/heapwalk $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man7 \
		$(DESTDIR)$(DATADIR)/bash-completion/completions
	install -m 755 $(BUILD)/heapwalk $(DESTDIR)$(BINDIR)/heapwalk
	install -m 644 $(BUILD)/plugin/heapwalk-gdb.so \
		$(DESTDIR)$(PLUGINDIR)/heapwalk-gdb.so
	$(call gdb_script,$(PLUGINDIR)/heapwalk-gdb.so,$(DATADIR)/heapwalk/heapwalk.gdb,$(DESTDIR)$(DATADIR)/heapwalk/heapwalk.gdb)
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/libheapwalk.so.$(SOMAJOR)
	ln -sf libheapwalk.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/libheapwalk.so
	install -m 644 $(BUILD)/libheapwalk.a $(DESTDIR)$(LIBDIR)/libheapwalk.a
	install -m 644 libheapwalk/heapwalk.h \
		$(DESTDIR)$(INCLUDEDIR)/heapwalk/heapwalk.h
	$(call pc_file,$(DESTDIR)$(LIBDIR)/pkgconfig/heapwalk.pc)
	for m in $(MANPAGES); do \
	  sed -e 's|/usr/local/share|$(DATADIR)|g' -e 's|/usr/local/lib|$(LIBDIR)|g' \
	    -e 's|"heapwalk [0-9.]*"|"heapwalk $(VERSION)"|' $$m \
	    > $(DESTDIR)$(MANDIR)/man$${m##*.}/$${m##*/} || exit 1; \
	done
	$(if $(COMPLETION),install -m 644 $(COMPLETION) \
		$(DESTDIR)$(DATADIR)/bash-completion/completions/heapwalk)
	$(if $(DESTDIR),,@$(ldconfig_step))
	$(if $(DESTDIR),,@$(pkgconfig_step))

# The dynamic linker's cache learns of libheapwalk.so.0 (an installed
# program linked with -lheapwalk fails to start without it), when
# installing into the live system as root; a LIBDIR outside ld.so's
# search path is said, with what to do.
define ldconfig_step
if [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null 2>&1; then \
  ldconfig || true; \
  ldconfig -p 2>/dev/null | grep -q '=> $(LIBDIR)/libheapwalk.so.$(SOMAJOR)$$' || \
  echo "heapwalk: $(LIBDIR) is not in the dynamic linker's search path: add it to a file in /etc/ld.so.conf.d/ and run ldconfig (or set LD_LIBRARY_PATH) for programs linked with -lheapwalk"; \
else \
  echo "heapwalk: not root: run ldconfig as root for programs linked with -lheapwalk (or set LD_LIBRARY_PATH=$(LIBDIR))"; \
fi
endef

# pkg-config finds heapwalk.pc only in the directories it searches: a
# PREFIX of one's own (PREFIX=$$HOME/.local) needs PKG_CONFIG_PATH.
define pkgconfig_step
if command -v pkg-config >/dev/null 2>&1; then \
  case ":$$(pkg-config --variable pc_path pkg-config 2>/dev/null):$${PKG_CONFIG_PATH:-}:" in \
  *":$(LIBDIR)/pkgconfig:"*) ;; \
  *) echo "heapwalk: pkg-config does not search $(LIBDIR)/pkgconfig: export PKG_CONFIG_PATH=$(LIBDIR)/pkgconfig for 'pkg-config --cflags --libs heapwalk'";; \
  esac; \
fi
endef

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/heapwalk \
		$(DESTDIR)$(PLUGINDIR)/heapwalk-gdb.so \
		$(DESTDIR)$(DATADIR)/heapwalk/heapwalk.gdb \
		$(DESTDIR)$(LIBDIR)/libheapwalk.so.$(SOMAJOR) \
		$(DESTDIR)$(LIBDIR)/libheapwalk.so $(DESTDIR)$(LIBDIR)/libheapwalk.a \
		$(DESTDIR)$(INCLUDEDIR)/heapwalk/heapwalk.h \
		$(DESTDIR)$(LIBDIR)/pkgconfig/heapwalk.pc \
		$(DESTDIR)$(DATADIR)/bash-completion/completions/heapwalk \
		$(foreach m,$(MANPAGES),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m)))
	-rmdir $(DESTDIR)$(PLUGINDIR) $(DESTDIR)$(DATADIR)/heapwalk \
		$(DESTDIR)$(INCLUDEDIR)/heapwalk 2>/dev/null
	$(if $(DESTDIR),,-@[ "$$(id -u)" != 0 ] || ldconfig 2>/dev/null)

# Every harness for FUZZ_TIME seconds, one after the other; fails if any
# found a crash, a hang (> 10 s; fuzz-unpack: 30 s) or a leak
# (tests/fuzz/run.sh); one whose corpus core cannot be made here (77) is
# passed over with a message.
fuzz: deps
	@FUZZ_CC=$(FUZZ_CC) tests/fuzz/have-libfuzzer.sh || { echo "heapwalk: \
	make fuzz needs clang with libFuzzer (Debian: apt-get install clang \
	libclang-rt-dev, or 'make deps')" >&2; exit 1; }
	@$(MAKE) --no-print-directory fuzzers
	@rc=0; for f in $(FUZZERS); do \
	  CORPUS=$(abspath $(BUILD)/corpus) tests/fuzz/run.sh -t $(FUZZ_TIME) \
	    -c $(abspath $(BUILD)/fuzz)/corpus-$${f##*/} $${f##*/} \
	    $(abspath $(BUILD)/fuzz) || { r=$$?; [ $$r = 77 ] || rc=1; }; \
	done; exit $$rc

demo: deps
	@$(MAKE) --no-print-directory $(BUILD)/heapwalk $(PLUGIN)
	@scripts/demo.sh $(BUILD)

# BENCH_SHAPES="churn ptrs" runs those heap shapes alone, without the gdb,
# prof and live benchmarks (scripts/bench.sh lists the shapes).
bench: deps
	@$(MAKE) --no-print-directory $(BUILD)/heapwalk $(PLUGIN)
	@scripts/bench.sh $(BUILD)
	@if [ -z "$(BENCH_SHAPES)" ]; then echo; \
	  scripts/bench/gdb-heap.sh $(BUILD) || [ $$? = 77 ] || exit 1; echo; \
	  scripts/bench/prof-bench.sh $(BUILD) || [ $$? = 77 ] || exit 1; echo; \
	  scripts/bench/triage-bench.sh $(BUILD) || [ $$? = 77 ] || exit 1; echo; \
	  scripts/bench/live-big.sh $(BUILD) || [ $$? = 77 ] || exit 1; fi

# Not part of `bench`: it runs for minutes (77: this heapwalk has no --pid).
# live-signals.sh: the soak of heapwalk signalled at random moments of
# --pid runs (2000 of them, every CPU busy beside).
bench-live: deps
	@$(MAKE) --no-print-directory $(BUILD)/heapwalk
	@scripts/bench/live-cycles.sh $(BUILD) || [ $$? = 77 ]
	@echo
	@scripts/bench/live-signals.sh $(BUILD) || [ $$? = 77 ]

clean:
	rm -rf $(BUILD)

clean-bench:
	rm -rf $(BUILD)/bench $(BUILD)/bench-*
