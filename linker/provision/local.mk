noinst_LTLIBRARIES += linker/provision/libprovision.la
# kernel provision uses model only
linker_provision_libprovision_la_CPPFLAGS = -I$(srcdir)/linker/provision \
	-I$(srcdir)/model
linker_provision_libprovision_la_SOURCES =
# TranslateNKIASTToBIR, the KLR reader/writer/codegen, the inliner
linker_provision_libprovision_la_SOURCES += linker/provision/provision.h
linker_provision_libprovision_la_SOURCES += linker/provision/provision_int.h
linker_provision_libprovision_la_SOURCES += linker/provision/provision.c
linker_provision_libprovision_la_SOURCES += linker/provision/inline.c
linker_provision_libprovision_la_SOURCES += linker/provision/klr_codegen.c
linker_provision_libprovision_la_SOURCES += linker/provision/codegen_helpers.c
linker_provision_libprovision_la_SOURCES += linker/provision/irutil.c
linker_provision_libprovision_la_SOURCES += linker/provision/klr.h
linker_provision_libprovision_la_SOURCES += linker/provision/klr_json.c
linker_provision_libprovision_la_SOURCES += linker/provision/klr_read.c
linker_provision_libprovision_la_SOURCES += linker/provision/klr_write.c
linker_provision_libprovision_la_SOURCES += linker/provision/klr_schema.c
