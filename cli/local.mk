bin_PROGRAMS += lncsim
lncsim_SOURCES = cli/main.c cli/cli.h cli/cmd_verify.c
lncsim_LDADD = $(LNCSIM_LIBS) $(LNCSIM_EXT_LIBS)
