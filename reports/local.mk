noinst_LTLIBRARIES += reports/libreports.la
reports_libreports_la_SOURCES = reports/placeholder.c
