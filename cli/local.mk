bin_PROGRAMS += lncsim
# the program uses every library
lncsim_CPPFLAGS = -I$(srcdir)/cli $(LNCSIM_ALL_INCLUDES)
lncsim_SOURCES = cli/main.c cli/cli.h cli/cmd_verify.c
lncsim_SOURCES += cli/cli_db.h cli/cli_db.c cli/cmd_db.c cli/cmd_report.c
lncsim_SOURCES += cli/cmd_gen.c cli/cmd_diff.c cli/cmd_fuzz.c \
	cli/diff_case.c cli/diff_case.h
lncsim_LDADD = $(LNCSIM_LIBS) $(LNCSIM_EXT_LIBS)
lncsim_SOURCES += cli/cmd_run.c
lncsim_SOURCES += cli/cmd_link.c cli/cmd_mmt.c
lncsim_SOURCES += cli/cmd_lower.c cli/cmd_klr.c
