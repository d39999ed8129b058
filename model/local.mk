noinst_LTLIBRARIES += model/libmodel.la
# model uses no other library
model_libmodel_la_CPPFLAGS = -I$(srcdir)/model
model_libmodel_la_SOURCES = \
	model/common.c model/common.h \
	model/safeio.c model/safeio.h \
	model/enums.c model/enums.def \
	model/enumtab.c model/enumtab.h \
	model/dtype.c model/dtype.h \
	model/arch.c model/arch.h \
	model/npy.c model/npy.h \
	model/affine.c model/affine.h \
	model/module.c model/module.h \
	model/geometry.c model/geometry.h \
	model/build.c model/build.h \
	model/json_load.c model/json_save.c model/json_int.h model/json.h \
	model/paths.c \
	model/fileset.c model/fileset.h \
	model/verify.c model/verify.h \
	model/optable.c model/optable.h model/ops.def model/fields.def
