/*
** gen.h -- the random multi-core program generator.
**
** A generated set is N per-core modules, race-free by construction, that
** exercises every linker step: DMA loads through queues with semaphore
** waits, matmul accumulation groups over several K tiles, PSUM evacuation
** through Activation with and without bias, elementwise ops, cross-core
** hand-offs through DRAM guarded by barriers, per-core barrier sets that
** differ (unrenumbered ids collide), renumber:false barriers, external
** inputs shared by several cores, name collisions across cores, const
** tensors from .npy files, queue-instance switches. Same options, same bytes.
*/
#ifndef LNCSIM_GEN_H
#define LNCSIM_GEN_H

#include <stdint.h>
#include "common.h"
#include "module.h"
#include "fileset.h"

typedef enum ls_gen_size { LS_GEN_SMALL = 0, LS_GEN_MEDIUM, LS_GEN_LARGE } ls_gen_size;

typedef struct ls_gen_opts {
	int cores;          /* 1..64 */
	uint64_t seed;
	ls_gen_size size;
	const char *name;   /* set name; NULL: "gen<seed>" */
	const char *arch;   /* NULL: "gen3" */
	int loops;          /* the K tiles of each segment in a static Loop */
	int sync;           /* LS_GEN_SYNC_*: how instructions are ordered */
	int dynamic;        /* the K loops as DynamicForLoops over a register
			       trip count, their loads register-addressed
			       (implies loops) */
	int compute;        /* per core a tail of TensorReduce,
			       TensorScalarPtr, IndirectLoad and Select on
			       the data path (dependencies only: not with
			       LS_GEN_SYNC_SEMAPHORES) */
	int by_name;        /* some hand-offs name-matched: the consumer
			       declares an ExternalInput named like the
			       producer's ExternalOutput instead of a
			       remote_local_target view */
} ls_gen_opts;

/* Ordering: `dependencies` (and queue semaphore waits), or no
** dependencies but id-form `sync_info` semaphores in their place
** (on_update at the producer, on_wait at the consumer for the exact
** count the producer's completion brings; the queue semaphore waits
** stay). */
enum { LS_GEN_SYNC_DEPS = 0, LS_GEN_SYNC_SEMAPHORES = 1 };

/* Parse "deps" / "semaphores"; -1 when unknown. */
int ls_gen_sync_parse(const char *s);

/* Parse "small" / "medium" / "large"; -1 when unknown. */
int ls_gen_size_parse(const char *s);

/*
** Generate a set in memory. *mods receives `cores` modules (caller frees
** each with lm_module_free and the array with free). Each module's path is
** "<out_dir>/<name>/nc<c>/sg0/def.json" (out_dir may be NULL: ".").
** Const tensors are returned as files to write: *n_files pairs of
** (relative path under out_dir, npy bytes); free with ls_gen_files_free.
*/
typedef struct ls_gen_file {
	char *relpath;
	char *bytes;
	size_t len;
} ls_gen_file;

int ls_gen(const ls_gen_opts *o, const char *out_dir, lm_module ***mods,
	   ls_gen_file **files, int *n_files, lm_error *err);
void ls_gen_files_free(ls_gen_file *files, int n);

/* Write a set ls_gen made (its out_dir: dir_name) beneath the open
** directory dirfd, as ls_gen_write_at does; nothing is freed. */
int ls_gen_save_at(lm_module *const *mods, int cores,
		   const ls_gen_file *files, int n_files, int dirfd,
		   const char *dir_name, lm_error *err);
/* Add copies of the set's files to fs by the path they have beside the
** modules (out_dir as given to ls_gen): the linker and the simulator read
** them from there, with nothing written (lk_options / ls_options.files). */
void ls_gen_fileset(const ls_gen_file *files, int n_files,
		    const char *out_dir, lm_fileset *fs);

/* Generate and write everything under out_dir (atomic file writes). */
int ls_gen_write(const ls_gen_opts *o, const char *out_dir, lm_error *err);
/* The same beneath the open directory dirfd (dir_name: its path, the
** prefix of the modules' paths; NULL: "."); nothing above dirfd is
** opened. */
int ls_gen_write_at(const ls_gen_opts *o, int dirfd, const char *dir_name,
		    lm_error *err);

#endif
