bin_PROGRAMS += lncsim
lncsim_SOURCES = cli/main.c cli/cli.h cli/cmd_verify.c
lncsim_SOURCES += cli/cli_db.h cli/cli_db.c cli/cmd_db.c cli/cmd_report.c
lncsim_SOURCES += cli/cmd_gen.c
lncsim_LDADD = $(LNCSIM_LIBS) $(LNCSIM_EXT_LIBS)
lncsim_SOURCES += cli/cmd_run.c
