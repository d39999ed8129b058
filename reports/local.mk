noinst_LTLIBRARIES += reports/libreports.la
# reports uses db (and what db.h needs: sim.h, model)
reports_libreports_la_CPPFLAGS = -I$(srcdir)/reports -I$(srcdir)/db \
	-I$(srcdir)/sim -I$(srcdir)/model
reports_libreports_la_SOURCES = reports/report.h reports/report_int.h \
	reports/report.c reports/gnuplot.c
nodist_reports_libreports_la_SOURCES = reports/gp_scripts.c
EXTRA_DIST += reports/gp reports/gp2c.sh
CLEANFILES += reports/gp_scripts.c

# The committed gnuplot scripts, embedded in the program so an installed
# lncsim needs no data directory; `lncsim report` writes them back out.
reports_gp = $(srcdir)/reports/gp/util.gp $(srcdir)/reports/gp/timeline.gp \
	$(srcdir)/reports/gp/waits.gp \
	$(srcdir)/reports/gp/shapes.gp $(srcdir)/reports/gp/history.gp
reports/gp_scripts.c: $(reports_gp) $(srcdir)/reports/gp2c.sh
	$(AM_V_GEN)$(MKDIR_P) reports && \
	$(SHELL) $(srcdir)/reports/gp2c.sh $(reports_gp) > $@-t && mv -f $@-t $@
