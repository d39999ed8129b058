# Calls run one way, down these layers (the top first): a file calls only
# functions of the files on the layers below its own; provision.c drives,
# irutil.c is under everyone (tests/test_hygiene checks).
#   provision.c
#   inline.c klr_codegen.c
#   codegen_helpers.c klr_json.c
#   klr_read.c klr_write.c
#   klr_gen.c
#   klr_schema.c irutil.c
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
linker_provision_libprovision_la_SOURCES += linker/provision/klr_gen.c
linker_provision_libprovision_la_SOURCES += linker/provision/klr_schema.c
