/*
** sim.h -- the NeuronCore simulator: public API.
**
** A run takes either ONE module (a per-core module, or a linked module whose
** entry is a dispatcher) or N per-core modules side by side on an N-core
** machine (the reference run of the differential checker). It returns the
** external outputs, per-core statistics, one record per executed
** Matmult and one per NKIKernel call. Runs are deterministic: same
** inputs and options, same bits and same times.
**
** Ownership: ls_result and everything in it belong to the caller after
** ls_run returns; free with ls_result_free. The modules are only read.
*/
#ifndef LNCSIM_SIM_H
#define LNCSIM_SIM_H

#include <stdint.h>
#include "common.h"
#include "module.h"
#include "fileset.h"

/* ---- host tensors ---------------------------------------------------- */

/* One host tensor: an external input or output, bound by allocation name. */
typedef struct ls_tensor {
	char *name;          /* allocation name (tensor-map layer_name) */
	lm_dtype dtype;
	int ndim;
	int64_t shape[8];
	int64_t count;       /* elements */
	void *data;          /* count * lm_dtype_size(dtype) bytes */
	int read_by_other_module; /* an output of a side-by-side run that an
				     instruction of another module read (through
				     a remote_local_target view) */
} ls_tensor;

/* A set of host tensors. */
typedef struct ls_tensors {
	int n;
	ls_tensor *t;
} ls_tensors;

void ls_tensors_free(ls_tensors *ts);
ls_tensor *ls_tensors_find(const ls_tensors *ts, const char *name);
/* Add a copy of the data (caller keeps its buffer). */
ls_tensor *ls_tensors_add(ls_tensors *ts, const char *name, lm_dtype t,
			  const int64_t *shape, int ndim, const void *data);

/*
** The file name of tensor name in an --inputs / --outputs directory: the
** name with '%', '/', backslash and control bytes written as %XX (upper-case
** hex: "a/b" -> "a%2Fb.npy", "50%" -> "50%25.npy"), then ".npy". Injective,
** one plain path component, the same for reading and writing. *out caller
** frees. Error (dir names the directory) when the result would be longer
** than 255 bytes.
*/
int ls_tensor_file_name(char **out, const char *name, const char *dir,
			lm_error *err);

/*
** Build the host inputs of the modules: every ExternalInput allocation
** (declared once or by several modules: one tensor) from the file
** ls_tensor_file_name gives it in inputs_dir when inputs_dir is non-NULL
** (opened as given; the file beneath it is opened without following a
** symlink and must be a regular file), else generated from seed (uniform in
** [-1, 1), rounded to the tensor dtype; the stream for a tensor depends
** only on the seed and the tensor name, so every run sees the same data).
** Missing file: error "missing input 'NAME'".
*/
int ls_make_inputs(lm_module *const *mods, int n_mods, const char *inputs_dir,
		   uint64_t seed, ls_tensors *out, lm_error *err);
/* Write every tensor as its ls_tensor_file_name in dir (made when missing,
** opened as given), by lm_write_at: a symlink there is replaced, never
** followed. */
int ls_write_outputs(const ls_tensors *ts, const char *dir, lm_error *err);
/* ls_write_outputs into the open directory dirfd (dir names it). */
int ls_write_outputs_at(int dirfd, const char *dir, const ls_tensors *ts,
			lm_error *err);

/* ---- options --------------------------------------------------------- */

typedef struct ls_options {
	int64_t max_time_ps;       /* 0: no limit */
	int64_t max_instructions;  /* 0: no limit (lncsim run and diff pass
				      LS_MAX_INSTRUCTIONS_DEFAULT unless told) */
	uint64_t perturb_seed;     /* 0: the plain cost model; else a seeded
				      perturbation of latencies and tie-breaks */
	const char *trace_path;    /* Chrome trace-event JSON, or NULL */
	int64_t max_memory;        /* bytes of simulated memory a run may
				      allocate; 0: LS_MAX_MEMORY_DEFAULT */
	const lm_fileset *files;   /* non-NULL: Const files are read from this
				      set (by the path they have beside their
				      module), never from disk */
	int race;                  /* 1: run the happens-before race
				      detector (docs/race.md) */
	int keep_races;            /* with race: a run that fails (LM_ECHECK)
				      after races were found leaves them in
				      *out (races, n_races, races_found,
				      race_shadow_bytes; nothing else), for
				      ls_result_free */
} ls_options;

/* The instructions lncsim run and lncsim diff let a run execute unless
** --max-instructions says otherwise (0: no limit): a loop whose end
** depends on data (a branch back, a DoWhile) may never end. */
#define LS_MAX_INSTRUCTIONS_DEFAULT ((int64_t)1000000000)

/* The default limit of simulated memory of a run: 4 GiB. */
#define LS_MAX_MEMORY_DEFAULT ((int64_t)4 << 30)

/*
** Check the simulated memory a run of mods would allocate against
** max_bytes (0: the default) before anything is allocated: every root
** DRAM allocation counts its bytes twice (the storage and its
** initialization shadow) plus, for an external input (once per name),
** an external output or a Const, its host copy. Returns 0, or LM_EINPUT
** with err naming the allocation over the limit ("FILE: NAME: needs N
** bytes of simulated memory ..., over the memory limit of M bytes") or
** the total, or an allocation whose size overflows int64. ls_run and
** ls_run_multi run this check with opts->max_memory first; a caller
** that makes the inputs (ls_make_inputs) runs it before them.
*/
int ls_check_memory(lm_module *const *mods, int n_mods, int64_t max_bytes,
		    lm_error *err);
/* ls_check_memory for a run with the race detector when race: a DRAM
** allocation counts twice its bytes more (its race shadow). */
int ls_check_memory_race(lm_module *const *mods, int n_mods,
			 int64_t max_bytes, int race, lm_error *err);

/* ---- statistics ------------------------------------------------------ */

enum { LS_ENGINES = 5 }; /* PE, ACT, DVE, POOL, SP (index = lm_engine - 1) */

typedef struct ls_core_stats {
	int core;
	int64_t busy_ps[LS_ENGINES];
	int64_t instructions;
	int64_t matmuls;
	int64_t macs;              /* sum K*M*N over executed Matmults */
	double pe_util;            /* PE busy / makespan */
	double mac_util;           /* MACs / (128*128 * PE cycles of makespan) */
	int64_t dma_bytes;
	int64_t dma_transfers;
	int64_t barrier_wait_ps;   /* sum of wait_barrier_ps */
	int64_t semaphore_wait_ps; /* sum of wait_sem_ps */
	int64_t end_ps;            /* when the core's last work completed */
	/* Each engine's time, split five ways that add up to the run's
	** sim_time_ps: busy_ps (running an instruction; a DMA only for its
	** issue), wait_sem_ps (its next instruction waits for a semaphore),
	** wait_barrier_ps (in a CoreBarrier from arrival to release, or
	** parked at a join on ALL), wait_dep_ps (its next instruction waits
	** for a dependency, for the Call / NKIKernel whose body it belongs
	** to to start, or a Drain for the engine's DMAs) and
	** idle_ps (nothing queued: before its first and after its last
	** instruction). A wait whose reason changes is split at the change. */
	int64_t wait_sem_ps[LS_ENGINES];
	int64_t wait_barrier_ps[LS_ENGINES];
	int64_t wait_dep_ps[LS_ENGINES];
	int64_t idle_ps[LS_ENGINES];
} ls_core_stats;

/*
** One NKIKernel (IT55) call the run made (docs/simulator.md, "Kernel
** statistics"): the call instruction, the kernel function it runs, the
** function the call stands in, on which core. Its interval runs from
** the call's start (when its body may start) to the call's completion
** (every body instruction complete, DMAs included). Per engine, over the
** instructions of the body (nested Call and NKIKernel bodies included):
** busy, semaphore, barrier and dependency wait, and idle (the rest of
** the interval), adding up to end_ps - start_ps. The DMAs of the body:
** bytes, transfers, the sum of their transfer times (transfer start to
** completion) and dma_active_ps, the time at least one was in flight.
** critical: the engine whose last body instruction ended last
** (0..LS_ENGINES-1, index = lm_engine - 1), LS_ENGINES when the body's
** last DMA completed after every engine's last instruction, -1 when
** nothing of the body ran. parent: the index of the kernel call this one
** is nested in, -1 when none. Kernels are listed by start, then by the
** order their calls were reached.
*/
/* One DMA queue instance's transfers inside a kernel call. */
typedef struct ls_kernel_queue {
	char *queue;               /* "QUEUE/INSTANCE", as the trace names it */
	int64_t bytes, transfers;
	int64_t xfer_ps;           /* the transfers' times summed */
	int64_t active_ps;         /* the union of their intervals */
} ls_kernel_queue;

typedef struct ls_kernel_stats {
	int core;
	char *call;                /* the NKIKernel instruction's name */
	char *func;                /* the kernel function */
	char *caller;              /* the function the call is in */
	int parent, depth;         /* depth 0: called from a non-kernel */
	int64_t start_ps, end_ps;
	int64_t instructions;
	int64_t busy_ps[LS_ENGINES];
	int64_t wait_sem_ps[LS_ENGINES];
	int64_t wait_barrier_ps[LS_ENGINES];
	int64_t wait_dep_ps[LS_ENGINES];
	int64_t idle_ps[LS_ENGINES];
	int64_t last_end_ps[LS_ENGINES]; /* its last body instruction's end
					    (0: none) */
	int64_t dma_bytes, dma_transfers;
	int64_t dma_xfer_ps, dma_active_ps, dma_end_ps;
	int critical;
	/* the same DMA figures per queue instance, by name */
	int n_queues;
	ls_kernel_queue *queues;
} ls_kernel_stats;

/* The name of kernel engine index e of ls_kernel_stats.critical: "PE",
** "ACT", "DVE", "POOL", "SP", "DMA" (e == LS_ENGINES) or "-". */
const char *ls_kernel_engine_name(int e);

typedef struct ls_matmul_rec {
	int core;
	char *name;                /* instruction name */
	int k, m, n;
	lm_dtype dtype;            /* moving dtype */
	int64_t start_ps, duration_ps;
	double array_util;         /* K*M / 128^2 */
} ls_matmul_rec;

/*
** A race the detector found (docs/race.md): two accesses to overlapping
** bytes, at least one a write, not ordered by happens-before. a is the
** access made first in this run, b the later one. memory "SBUF", "PSUM"
** or "DRAM"; core the memory's core (-1 for DRAM); object the DRAM
** storage ("" for SBUF / PSUM); [lo, hi) the bytes (the hull of the
** 4-byte granules where the two met): DRAM the byte offset in the
** storage, SBUF / PSUM partition * bytes-per-partition of the arch +
** the byte in the partition. Per access: function, block ("" in a
** function without blocks), instruction, loop iteration ("i=3,j=0", ""
** outside loops), core, engine ("SP", ..., or "queue NAME" for a DMA's
** write at its completion). last_common: the last instruction of a's
** engine (or queue) that b is ordered after ("" when none).
*/
typedef struct ls_race {
	char *kind;                /* "RAW", "WAR", "WAW" */
	char *memory;
	int64_t core;
	char *object;
	int64_t lo, hi;
	char *a_func, *a_block, *a_inst, *a_iter;
	int64_t a_core;
	char *a_engine;
	char *b_func, *b_block, *b_inst, *b_iter;
	int64_t b_core;
	char *b_engine;
	char *last_common;
} ls_race;

/* "RAW SBUF[0] - [0,4): w (f/b/w - core 0 DVE) vs r (...); last common: x" */
void ls_race_format(const ls_race *r, lm_buf *b);

typedef struct ls_result {
	int n_cores;
	int64_t sim_time_ps;       /* makespan */
	int64_t instructions;      /* executed, all cores */
	ls_core_stats *cores;      /* n_cores */
	int n_matmuls;
	ls_matmul_rec *matmuls;
	ls_tensors outputs;        /* external outputs of the run */
	double wall_run_s;         /* host seconds in the event loop (added;
				      excludes preparation and teardown) */
	/* opts->race: the distinct races (one per kind, memory, object and
	** pair of instructions; sorted by memory, core, object, lo), all
	** counted in races_found (n_races holds at most 100000 of them);
	** the shadow's bytes */
	int n_races;
	ls_race *races;
	int64_t races_found;
	int64_t race_shadow_bytes;
	/* the NKIKernel calls the run made (none: NULL, 0) */
	int n_kernels;
	ls_kernel_stats *kernels;
} ls_result;

void ls_result_free(ls_result *r);

/* ---- running --------------------------------------------------------- */

/*
** Run one module: a per-core module on its own core (core id from its
** attributes), or a linked module whose entry function is a dispatcher.
** The module must have passed lm_verify. Runtime errors (deadlock, barrier
** collision, uninitialized read, carrier reached, limits) return LM_ECHECK
** with err naming the instruction and core; bad input returns LM_EINPUT.
*/
int ls_run(const lm_module *m, const ls_tensors *inputs,
	   const ls_options *opts, ls_result *out, lm_error *err);

/*
** Run N per-core modules side by side on an N-core machine: core of each
** module from its neuron_core_id; per-module semaphore, queue and barrier
** namespaces; one DRAM (a remote_local_target view reads the producer
** core's allocation). External inputs declared by several modules are one
** host tensor; an external input named like another module's external
** output is that output (a name-matched hand-off, no host tensor); an
** external output declared by two modules is an error.
*/
int ls_run_multi(lm_module *const *mods, int n_mods, const ls_tensors *inputs,
		 const ls_options *opts, ls_result *out, lm_error *err);

/*
** The same run prepared once and made any number of times (the schedules
** of the differential checker): ls_machine_prepare does what ls_run
** (multi 0) or ls_run_multi (multi 1) does before time 0 -- the memory
** check with opts->max_memory, every name and operand resolved, Const
** files loaded, inputs bound -- and fails as they would; each
** ls_machine_run then runs from that state under its own opts (limits,
** perturb_seed, trace_path) and gives what a fresh ls_run with those
** opts would. The modules and the inputs are borrowed until
** ls_machine_free.
*/
typedef struct ls_machine ls_machine;
int ls_machine_prepare(ls_machine **out, lm_module *const *mods, int n_mods,
		       int multi, const ls_tensors *inputs,
		       const ls_options *opts, lm_error *err);
int ls_machine_run(ls_machine *mc, const ls_options *opts, ls_result *out,
		   lm_error *err);
void ls_machine_free(ls_machine *mc);

/* ---- statistics, limits and host files -------------------------------- */

/*
** Append the per-core statistics table of r (what `lncsim run --stats`
** prints) to b.
*/
void ls_format_stats(const ls_result *r, lm_buf *b);

#endif
