# cql_fdw: PostgreSQL foreign-data wrapper for Apache Cassandra (CQL native protocol)
#
# make / make install        build and install the extension (PGXS), and
#                            cqlbridge and cqlcli into pg_config --bindir
# make unit                  build C unit tests of the protocol library (ASan+UBSan)
# make integration           build C programs that test the library against a live node
# make fuzz                  build libFuzzer targets (needs clang)
# make tools                 build the cqlcli command-line client
# make check                 the fast loop: unit tests + pg_regress, one node,
#                            PostgreSQL 15 (scripts/check.sh, a few minutes)
# make test                  everything: services, all suites, one summary line
# make demo                  the main job: services + demo

EXTENSION  = cql_fdw
# the one version number is the control file's default_version; the build
# derives the rest from it (connection.h's CQLFDW_VERSION, the STARTUP
# DRIVER_VERSION, cqlbridge's and cqlcli's --version), and
# scripts/check_layers.py fails if anything disagrees
EXTVERSION := $(shell sed -n "s/^default_version *= *'\(.*\)'.*/\1/p" $(dir $(lastword $(MAKEFILE_LIST)))cql_fdw.control)
MODULE_big = cql_fdw
# the 0.1 script plus the update scripts: CREATE EXTENSION installs 0.1 and
# follows the update path, so fresh and updated databases are identical
DATA       = cql_fdw--0.1.sql $(sort $(wildcard cql_fdw--*--*.sql))
PGFILEDESC = "cql_fdw - foreign-data wrapper for Apache Cassandra"

CQL_SRCS := $(sort $(wildcard src/cql/*.c))
FDW_SRCS := $(sort $(wildcard src/fdw/*.c))
CQL_HDRS := $(wildcard src/cql/*.h)
# src/bridge/*.c only: src/bridge/cli/ is the separate cqlbridge program
BRIDGE_EXT_SRCS := $(sort $(wildcard src/bridge/*.c))
OBJS      = $(CQL_SRCS:.c=.o) $(FDW_SRCS:.c=.o) $(BRIDGE_EXT_SRCS:.c=.o)

# src/include: headers shared by the extension's parts (compat.h); only the
# FDW's own objects see src/fdw, so src/bridge cannot include an FDW header
PG_CPPFLAGS = -I$(srcdir)/src/include -I$(srcdir)/src/cql
SHLIB_LINK  = -llz4 -lssl -lcrypto

# pg_regress suites, in order (sql/NAME.sql -> expected/NAME.out)
REGRESS      = $(shell cat $(srcdir)/sql/schedule.txt 2>/dev/null)
REGRESS_OPTS = --inputdir=$(srcdir) --outputdir=$(srcdir)/build/regress

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
# `make check` is our fast loop.  PGXS defines a `check` of its own that
# only says "not supported" for extensions; a second recipe for a target
# makes make warn on every run, so for that goal alone PGXS is not loaded
# (scripts/check.sh runs make again for the build).
ifeq ($(MAKECMDGOALS),check)
.PHONY: check
check:
	@bash scripts/check.sh
else
include $(PGXS)
endif

# PGXS does not track headers; a changed struct must rebuild its users
FDW_HDRS := $(wildcard src/fdw/*.h)
SHARED_HDRS := $(wildcard src/include/*.h)
$(OBJS): $(CQL_HDRS) $(FDW_HDRS) $(SHARED_HDRS)
$(FDW_SRCS:.c=.o) $(FDW_SRCS:.c=.bc): override CPPFLAGS += -I$(srcdir)/src/fdw -DCQLFDW_VERSION='"$(EXTVERSION)"'
$(FDW_SRCS:.c=.o) $(FDW_SRCS:.c=.bc): $(EXTENSION).control

# Objects are built next to the sources: building against another
# PostgreSQL (make PG_CONFIG=...) must rebuild them all, so they depend on
# a stamp that changes with the pg_config in use.
PG_STAMP      := build/pg_config.stamp
PG_STAMP_TEXT := $(shell $(PG_CONFIG) --version) $(shell $(PG_CONFIG) --includedir-server) $(CC)
$(shell mkdir -p build && { [ "$$(cat $(PG_STAMP) 2>/dev/null)" = "$(PG_STAMP_TEXT)" ] || echo "$(PG_STAMP_TEXT)" > $(PG_STAMP); })
$(OBJS) $(OBJS:.o=.bc): $(PG_STAMP)

# A PostgreSQL built with another compiler passes the warning options of
# that compiler (the PyPI 18.6 build: gcc 14's -Wmissing-variable-declarations,
# which Debian's gcc 12 rejects; clang rejects several gcc ones).  Drop
# exactly the options this $(CC) does not know, nothing else.
CC_UNKNOWN_FLAGS := $(shell LC_ALL=C $(CC) $(CFLAGS) -x c -c /dev/null -o /dev/null 2>&1 | \
	sed -n -e "s/.*unrecognized command-line option '\([^']*\)'.*/\1/p" \
	       -e "s/.*unknown warning option '\([^']*\)'.*/\1/p" \
	       -e "s/.*optimization flag '\([^']*\)' is not supported.*/\1/p")
ifneq ($(CC_UNKNOWN_FLAGS),)
override CFLAGS := $(filter-out $(CC_UNKNOWN_FLAGS),$(CFLAGS))
endif

# ---------------------------------------------------------------------------
# Protocol library builds outside the server: sanitizers on, no PG headers.
# ---------------------------------------------------------------------------
BUILD      ?= build
HOSTCC     ?= gcc
SAN_FLAGS  ?= -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
LIB_CFLAGS  = -std=gnu11 -g -O1 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Isrc/cql -Itests/unit $(SAN_FLAGS)

LIB_OBJS := $(patsubst src/cql/%.c,$(BUILD)/lib/%.o,$(CQL_SRCS))

$(BUILD)/lib/%.o: src/cql/%.c $(CQL_HDRS)
	@mkdir -p $(dir $@)
	$(HOSTCC) $(LIB_CFLAGS) -c -o $@ $<

$(BUILD)/libcql.a: $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/unit/%,$(sort $(wildcard tests/unit/test_*.c)))
INTEG_BINS := $(patsubst tests/integration/%.c,$(BUILD)/integration/%,$(sort $(wildcard tests/integration/test_*.c)))

$(BUILD)/unit/%: tests/unit/%.c $(BUILD)/libcql.a $(wildcard tests/unit/*.h)
	@mkdir -p $(dir $@)
	$(HOSTCC) $(LIB_CFLAGS) -o $@ $< $(BUILD)/libcql.a -llz4 -lssl -lcrypto

$(BUILD)/integration/%: tests/integration/%.c $(BUILD)/libcql.a $(wildcard tests/unit/*.h) $(wildcard tests/integration/*.h)
	@mkdir -p $(dir $@)
	$(HOSTCC) $(LIB_CFLAGS) -Itests/integration -o $@ $< $(BUILD)/libcql.a -llz4 -lssl -lcrypto

# its version is cql_fdw's (--version, the STARTUP message's DRIVER_VERSION)
$(BUILD)/cqlcli: src/tools/cqlcli.c $(BUILD)/libcql.a $(EXTENSION).control
	$(HOSTCC) $(LIB_CFLAGS) -DCQLCLI_VERSION='"$(EXTVERSION)"' -o $@ $< $(BUILD)/libcql.a -llz4 -lssl -lcrypto

# The installed cqlcli: the same sources without the sanitizers of the
# test builds (their own objects under $(BUILD)/release).
REL_CFLAGS = -std=gnu11 -g -O2 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Isrc/cql
REL_LIB_OBJS := $(patsubst src/cql/%.c,$(BUILD)/release/lib/%.o,$(CQL_SRCS))

$(BUILD)/release/lib/%.o: src/cql/%.c $(CQL_HDRS)
	@mkdir -p $(dir $@)
	$(HOSTCC) $(REL_CFLAGS) -c -o $@ $<

$(BUILD)/release/cqlcli: src/tools/cqlcli.c $(REL_LIB_OBJS) $(EXTENSION).control
	$(HOSTCC) $(REL_CFLAGS) -DCQLCLI_VERSION='"$(EXTVERSION)"' -o $@ $< $(REL_LIB_OBJS) -llz4 -lssl -lcrypto

# ---------------------------------------------------------------------------
# cqlbridge command-line program (libpq client, no PG server headers).
# ---------------------------------------------------------------------------
# main.c on top, one folder per command (plan/ load/ sync/ check/) and
# common/ below them (layers: scripts/check_layers.py); one object per file
# under $(BUILD)/bridge/, which check_layers.py reads with nm.
BRIDGE_CLI_SRCS := $(sort $(wildcard src/bridge/cli/*.c src/bridge/cli/*/*.c))
BRIDGE_CLI_HDRS := $(wildcard src/bridge/cli/*.h src/bridge/cli/*/*.h)
BRIDGE_CLI_OBJS := $(patsubst src/bridge/cli/%.c,$(BUILD)/bridge/%.o,$(BRIDGE_CLI_SRCS))

$(BUILD)/bridge/%.o: src/bridge/cli/%.c $(BRIDGE_CLI_HDRS) $(PG_STAMP)
	@mkdir -p $(dir $@)
	$(HOSTCC) -std=gnu11 -O2 -g -Wall -Wextra -I$(shell $(PG_CONFIG) --includedir) -Isrc/bridge/cli -DCQLBRIDGE_VERSION='"$(EXTVERSION)"' -c -o $@ $<

# linked with (and, through its RPATH, run with) the libpq of $(PG_CONFIG)
$(BUILD)/cqlbridge: $(BRIDGE_CLI_OBJS)
	@mkdir -p $(dir $@)
	$(HOSTCC) -g -o $@ $(BRIDGE_CLI_OBJS) -L$(shell $(PG_CONFIG) --libdir) -Wl,-rpath,$(shell $(PG_CONFIG) --libdir) -lpq

.PHONY: bridge
bridge: $(BUILD)/cqlbridge

# make builds the programs too (as the user, not as root during make
# install), and make install puts cqlbridge and cqlcli into pg_config
# --bindir, next to psql
ifneq ($(MAKECMDGOALS),check)
all: $(BUILD)/cqlbridge $(BUILD)/release/cqlcli

install: install-programs
uninstall: uninstall-programs
endif

.PHONY: install-programs uninstall-programs
install-programs: $(BUILD)/cqlbridge $(BUILD)/release/cqlcli
	$(MKDIR_P) '$(DESTDIR)$(bindir)'
	$(INSTALL_PROGRAM) $(BUILD)/cqlbridge '$(DESTDIR)$(bindir)/cqlbridge'
	$(INSTALL_PROGRAM) $(BUILD)/release/cqlcli '$(DESTDIR)$(bindir)/cqlcli'

uninstall-programs:
	rm -f '$(DESTDIR)$(bindir)/cqlbridge' '$(DESTDIR)$(bindir)/cqlcli'

# the statement texts of "cqlbridge workload" (no server, no libpq call):
# the draft's normalize.c with the program's common files it uses
DRAFT_UNIT_SRCS := src/bridge/cli/draft/normalize.c src/bridge/cli/common/base.c src/bridge/cli/common/blocks.c
$(BUILD)/unit/test_draft_normalize: tests/unit/test_draft_normalize.c $(DRAFT_UNIT_SRCS) $(BRIDGE_CLI_HDRS) tests/unit/tap.h
	@mkdir -p $(dir $@)
	$(HOSTCC) $(LIB_CFLAGS) -I$(shell $(PG_CONFIG) --includedir) -Isrc/bridge/cli -o $@ $< $(DRAFT_UNIT_SRCS)

# cqlbridge's JSON reader (report.html reads verify.json and diff.json back)
BRIDGE_JSON_UNIT_SRCS := src/bridge/cli/common/json.c src/bridge/cli/common/base.c
$(BUILD)/unit/test_bridge_json: tests/unit/test_bridge_json.c $(BRIDGE_JSON_UNIT_SRCS) $(BRIDGE_CLI_HDRS) tests/unit/tap.h
	@mkdir -p $(dir $@)
	$(HOSTCC) $(LIB_CFLAGS) -I$(shell $(PG_CONFIG) --includedir) -Isrc/bridge/cli -o $@ $< $(BRIDGE_JSON_UNIT_SRCS)

FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(sort $(wildcard tests/fuzz/fuzz_*.c)))

$(BUILD)/fuzz/%: tests/fuzz/%.c $(CQL_SRCS) $(CQL_HDRS)
	@mkdir -p $(dir $@)
	clang -std=gnu11 -g -O1 -Isrc/cql -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -o $@ $< $(CQL_SRCS) -llz4 -lssl -lcrypto

.PHONY: unit integration fuzz tools test demo
unit: $(UNIT_BINS)
integration: $(INTEG_BINS)
fuzz: $(FUZZ_BINS)
tools: $(BUILD)/cqlcli

test:
	bash scripts/test.sh

demo:
	bash scripts/demo.sh

EXTRA_CLEAN = $(BUILD)
