# heapwalk - plain, non-recursive Makefile.  Sources are found by wildcard.
#
#   make            build/heapwalk (optimised, with debug info)
#   make check      set-up, ASan/UBSan build, every test; ends "N passed, N failed"
#   make demo       set-up, build, analyse a sample core made from corpora/
#   make bench      the big-heap benchmark (>= 1 GiB heap, >= 10M chunks)

CC      ?= cc
BUILD   := build
PKGS    := libdw libelf
# Recursive (=) so pkg-config runs after the deps target installed it.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS   = $(shell pkg-config --libs $(PKGS))

WARN    := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wstrict-prototypes \
           -Wold-style-definition -Wvla -Wpointer-arith -Wundef \
           -Wmissing-prototypes -Wno-format-nonliteral
STD     := -std=c11 -D_GNU_SOURCE -Ilibheapwalk -pthread
CFLAGS  ?= -O2 -g
SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

LIB_SRC := $(shell find libheapwalk -name '*.c' -not -path 'libheapwalk/cli/*' | sort)
CLI_SRC := libheapwalk/cli/heapwalk.c
HDRS    := $(shell find libheapwalk -name '*.h')
TOOLS   := $(patsubst tests/tools/%.c,$(BUILD)/tools/%,$(wildcard tests/tools/*.c))

LIB_OBJ      := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRC))
LIB_OBJ_ASAN := $(patsubst %.c,$(BUILD)/asan/obj/%.o,$(LIB_SRC))

.PHONY: all deps check demo bench clean test
all: $(BUILD)/heapwalk

deps:
	@scripts/setup-deps.sh

$(BUILD)/obj/%.o: %.c $(HDRS) | deps
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(STD) $(WARN) $(CFLAGS) $(PKG_CFLAGS) -c -o $@ $<

$(BUILD)/asan/obj/%.o: %.c $(HDRS) | deps
	@mkdir -p $(dir $@)
	@echo "  CC/SAN  $<"
	@$(CC) $(STD) $(WARN) -O1 -g $(SAN) $(PKG_CFLAGS) -c -o $@ $<

$(BUILD)/libheapwalk.a: $(LIB_OBJ)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/asan/libheapwalk.a: $(LIB_OBJ_ASAN)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/heapwalk: $(BUILD)/obj/$(CLI_SRC:.c=.o) $(BUILD)/libheapwalk.a
	$(CC) $(CFLAGS) -pthread -o $@ $^ $(PKG_LIBS)

$(BUILD)/asan/heapwalk: $(BUILD)/asan/obj/$(CLI_SRC:.c=.o) $(BUILD)/asan/libheapwalk.a
	$(CC) -g $(SAN) -pthread -o $@ $^ $(PKG_LIBS)

$(BUILD)/tools/%: tests/tools/%.c $(wildcard tests/tools/*.h) | deps
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(WARN) -O2 -g -o $@ $<

# The tests run the sanitized build: a core is untrusted input.
check test: $(BUILD)/asan/heapwalk $(TOOLS)
	@HEAPWALK=$(abspath $(BUILD)/asan/heapwalk) TOOLS=$(abspath $(BUILD)/tools) \
	 CORPUS=$(abspath $(BUILD)/corpus) TOP=$(CURDIR) tests/run.sh

demo: $(BUILD)/heapwalk
	@scripts/demo.sh $(BUILD)

bench: $(BUILD)/heapwalk
	@scripts/bench.sh $(BUILD)
	@echo
	@BENCH_ALLOCATOR=jemalloc BIGHEAP_ARGS="4 5000000" scripts/bench.sh $(BUILD)

clean:
	rm -rf $(BUILD)
