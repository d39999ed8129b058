/*
** sim_int.h -- the simulator's internal types, shared by the files of sim/.
**
** The simulator has three rooms:
**   machine.c   the machine: per-core SBUF / PSUM, DRAM storages, the
**               prepared form of every module (operands resolved to byte
**               patterns, names resolved to indices), host I/O binding;
**   exec.c      the semantics: one exec_* function per opcode family,
**               reading memory at an instruction's start and staging its
**               writes (committed later by the scheduler); no time here;
**   sched.c     the scheduler: events in integer picoseconds, in-order
**               engines walking their streams with program cursors,
**               dependencies / wait / signal, DMA queues, core barriers,
**               calls, deadlock detection; no semantics;
**   ctrl.c      the program structure at run time: positions and their
**               order, loop trip counts, per-iteration values;
**   regs.c      registers: each engine's file, the register opcodes;
**   sync.c      synchronization: semaphore banks by id, events, the
**               waits and updates of sync_info, GroupResetSemaphores.
**   dmablk.c    DMA blocks: their preparation, the triggers' fire
**               counters and rewinds (sched.c runs the descriptors).
**   race.c      the happens-before race detector (--race): vector
**               clocks, the shadow of SBUF / PSUM / DRAM, the races.
** Hot loops live apart: apiter.c (access-pattern element loops and dtype
** conversions) and mmkernel.c (the Matmult kernel), actfunc.c (activation
** formulas), cost.c (the cost model), trace.c (Chrome trace output).
*/
#ifndef LNCSIM_SIM_INT_H
#define LNCSIM_SIM_INT_H

#include <stdint.h>
#include <stdio.h>
#include "common.h"
#include "affine.h"
#include "module.h"
#include "sim.h"

/* Byte-pattern dimensions one operand may have after merging. */
#define LS_MAX_DIMS 8
/* Core ids a machine may have (the verifier's CoreBarrier bound). */
#define LS_MAX_CORES 64
/* Structured loops one instruction may sit in. */
#define LS_MAX_NEST 16

typedef enum ls_space {
	LS_SP_NONE = 0, LS_SP_SB, LS_SP_PSUM, LS_SP_DRAM
} ls_space;

/*
** A resolved tensor operand, independent of the core it runs on: a byte
** offset from the start of the space (SB / PSUM: of the core's array laid
** out [partition][bytes]; DRAM: of the storage) and a row-major walk of
** byte strides. Adjacent dimensions that are contiguous are merged.
*/
typedef struct ls_opnd {
	ls_space space;
	lm_dtype dtype;
	int esize;
	int storage;            /* DRAM: storage index */
	int64_t off;            /* bytes */
	int ndim;
	int64_t stride[LS_MAX_DIMS]; /* bytes */
	int64_t num[LS_MAX_DIMS];
	int64_t count;          /* elements */
	int64_t parts;          /* first AP pair's num */
	int64_t free;           /* count / parts */
	const char *alloc;      /* allocation name (messages) */
	int64_t alloc_esize;    /* DRAM: element size of the allocation */
	/* SB / PSUM: where the operand sits in the arch's layout, before the
	** machine's compact layout (ls_layout) is applied to off / stride */
	int64_t part;           /* first partition */
	int64_t pstart;         /* byte of the first element in its partition */
	int pdim;               /* index of the partition dimension, or -1 */
} ls_opnd;

/* An operand bound to memory: what the element loops walk. */
typedef struct ls_view {
	uint8_t *data;          /* first element */
	uint8_t *init;          /* its shadow byte ("written" map) */
	const ls_opnd *o;
} ls_view;

struct ls_exec;

/* A Matmult operand read in place: row k starts ld elements after row
** k-1; float32, or bfloat16 when is_bf16 (widened exactly). */
typedef struct ls_mm_src {
	const void *p;
	int64_t ld;
	int is_bf16;
} ls_mm_src;

/*
** A Matmult that accumulates straight into PSUM when it completes: its
** operands as read at its start (in place, or gathered into a and b) and
** its accumulator rows. Exact as long as nothing writes st, mv or the
** accumulator in between; a write that would is preceded by computing
** the product into the staging buffer (ls_exec_commit), which turns the
** pending write into an ordinary staged one.
*/
typedef struct ls_mm_defer {
	int K, M, N, is_start;
	ls_mm_src st, mv;
	float *acc;             /* row 0 of the accumulator in PSUM */
	uint8_t *acc_init;      /* its shadow */
	int64_t ldc;            /* floats between its rows */
	uintptr_t lo[3], hi[3]; /* byte ranges that must not be written */
	int n_rng;
	float *a, *b;           /* gathered operands (owned) */
	size_t cap_a, cap_b;
} ls_mm_defer;

/* A staged write: committed into memory when the instruction completes. */
typedef struct ls_pending {
	int active;
	ls_view dst;
	uint8_t *buf;           /* count elements of dst dtype, raw */
	size_t cap;
	/* is_masked: only the elements whose mask byte is set are written
	** (the others keep their bytes and shadow); mask owned */
	int is_masked;
	uint8_t *mask;
	size_t cap_mask;
	/* has2: a second output written with the first (outs[1]) */
	int has2;
	ls_view dst2;
	uint8_t *buf2;
	size_t cap2;
	/* is_deferred: the write is made at the commit from memory read in
	** place, by a Matmult (mm), a copy (is_copy) or an elementwise op
	** (is_ew); buf unused */
	int is_deferred;
	ls_mm_defer mm;
	/* is_deferred and is_copy: a TensorCopy whose rows are copied from
	** cp_src (rows cp_ld bytes apart, dst's shape) at the commit;
	** mm.lo / hi[0] are the source's bytes, which nothing may write
	** before (ls_exec_commit) */
	int is_copy;
	const uint8_t *cp_src;
	int64_t cp_ld;
	/* is_deferred and is_ew: a float32 TensorTensor / TensorScalar
	** (ew_in) whose rows ew_rows x ew_L are computed at the commit
	** from ew_a (and ew_b), rows ew_lda (ew_ldb) floats apart, read in
	** place; mm.lo / hi: their bytes */
	int is_ew;
	const struct lm_inst *ew_in;
	const float *ew_a, *ew_b;
	int64_t ew_lda, ew_ldb, ew_rows, ew_L;
	struct ls_exec *x;      /* the run it was started in */
	/* copies of the operands dst and dst2 were bound to: an operand
	** placed at the issue lives in scratch the next issue reuses, and a
	** DMA's write lands later (dst.o is set to them again at commit:
	** the pending may have moved) */
	ls_opnd dsto, dsto2;
} ls_pending;

/*
** A dependency of an instruction b on an instruction a of its function,
** prepared (docs/simulator.md, Loops): loop is the innermost structured
** loop enclosing both (-1: none). An instance of b at position q waits
** until a's engine has passed the point t and no issued instance of a
** before q is incomplete. Forward (x >= 0): a comes before b in the
** iteration (or at top level): t is the end x of the construct holding a,
** in b's iteration; q is b's position. Backward (x < 0: a follows b in the
** body, or a loop-carried dependency): t is the end of b's previous
** iteration of loop (the loop's header on its first), q the start of b's
** iteration.
*/
typedef struct ls_sdep {
	int a;
	int loop;
	int x;
} ls_sdep;

/*
** A structured Loop of a function, prepared: its header instruction hdr,
** its body [hdr + 1, end) flattened after it, its parent loop (-1: none)
** and depth (0: outermost), chain[0..depth] the loops from the outermost
** down to this one; the axis; the engines whose streams hold an item of
** the body (engmask); per engine the stream position after the body
** (skip_pos). is_pass: an all-zero axis, one pass without a back edge.
** kind: a static Loop; a DynamicForLoop (lb, stride constants, ub_e
** evaluated by each engine at the header); a DoWhile (cond evaluated by
** each engine after each pass of the body).
*/
enum { LS_LOOP_STATIC = 0, LS_LOOP_DYN, LS_LOOP_DOWHILE };
typedef struct ls_sloop {
	int hdr, end;
	int parent, depth;
	int chain[LS_MAX_NEST];
	const char *axis;
	int64_t lb, ub, stride;
	int is_pass;
	int kind;               /* LS_LOOP_* */
	int n_iv_regs;          /* a Loop's registers: slots that receive the
				   induction value (iv_regs owned) */
	int *iv_regs;
	const struct lm_affine *ub_e, *cond; /* borrowed from the module */
	unsigned engmask;
	int skip_pos[LS_ENGINES];
} ls_sloop;

/*
** A value of an instruction evaluated at each issue from the induction
** values of the loops around it (slots: the depth of each loop in the
** instruction's chain): a linear form when the expression compiles to
** one, else the expression itself (borrowed from nothing: owned here).
*/
enum { LS_DYN_ACC_FLAG = 0, LS_DYN_PSUM_ZERO, LS_DYN_UNINIT, LS_DYN_IN_OFF,
       LS_DYN_OUT_OFF };
typedef struct ls_dyn {
	int what;               /* LS_DYN_* */
	int opnd;               /* LS_DYN_*_OFF: the operand */
	int is_lin;
	lm_affine_lin lin;
	struct lm_affine *expr; /* !is_lin: owned */
	int64_t lo, hi;         /* the values accepted (ACC_FLAG) */
	/* LS_DYN_*_OFF: a symbolic_ap operand, its address the start
	   element offset (the folded encoding of physical_ap); arg its
	   physical form at offset 0 (ap owned), checked at each issue */
	lm_arg arg;
	const struct lm_alloc *al;
	const struct lm_memloc *loc;
	int64_t pe;             /* elements per partition (0: DRAM) */
	/* the offsets in bounds (found at preparation with the verifier's
	   geometry): SB / PSUM partition <= pmax and element <= emax; DRAM
	   offset <= emax; -1: none */
	int64_t pmax, emax;
	/* a register_ap operand: reg its register (messages); arch the
	   space whose arch address the register holds (SB p * 0x40000 +
	   byte, PSUM p * 0x8000 + byte, DRAM the byte offset), or
	   LS_SP_NONE: the value (plus const_ap_offset) is the element
	   offset, as a symbolic_ap's */
	const char *reg;
	int arch;
} ls_dyn;
#define LS_MAX_DYN 6

/* A register operand, prepared: a register slot of the machine, or an
** immediate (slot -1) taken modulo 2^32. */
typedef struct ls_rop {
	int slot;
	uint32_t imm;
} ls_rop;

/* A RegisterMove (alu LM_ALU_BYPASS, one source) or RegisterAlu (two),
** prepared: dst := src[0] alu src[1] at dtype (int32 / uint32). A
** CompareAndBranch: alu its comp_op (BranchCompareOp ordinal), src[0]
** the register compared at dtype with src[1] (an immediate of that
** dtype's value, its bits in imm, or a register); no dst. */
typedef struct ls_rinst {
	int alu;                /* lm_aluop; CompareAndBranch: comp_op */
	lm_dtype dtype;
	int n_src;
	ls_rop src[4];
	ls_rop dst;
	/* RegisterAlu is_64bit: [lo, hi] := [src0, src1] alu [src2, src3]
	   (an immediate's two halves in src2, src3), hi in dst_hi */
	int is_64;
	ls_rop dst_hi;
} ls_rinst;

/*
** One sync_info entry, prepared (sync.c). kind: a named semaphore (slot:
** its index in mc->sems), a slot of a core's id bank (slot: the id,
** resolved through the bank of the core at run time) or an event (slot:
** the event id). mode: the WaitMode / UpdateMode ordinal; value the
** threshold or the amount (int32 arithmetic); reg the register slot of a
** sem-ge-reg threshold (-1); core the target core of an update (-1: the
** core that runs it).
*/
enum { LS_SYNC_NAMED = 0, LS_SYNC_ID, LS_SYNC_EVT };
typedef struct ls_ssync {
	int kind;
	int slot;
	int mode;
	int reg;
	int core;
	int64_t value;
	const char *name;       /* the named semaphore / register (messages) */
} ls_ssync;

/* The waits and updates of one instruction (or any other scheduled item:
** each one call of ls_sync_ready / consume / update). */
typedef struct ls_ssyncs {
	int n_wait, n_update;
	ls_ssync *wait, *update; /* one allocation, waits first (owned) */
} ls_ssyncs;

/*
** DMA blocks (dmablk.c): a DMATrigger's blocks (the DMABlocks' indices in
** its function, in dma_blocks order) and its number among the machine's
** triggers (its fire counter); a DMABlock's body, its descriptors at
** indices (its own, end); a SwitchQueueInstance or ResetQueueInstance
** that rewinds the triggers of its queue (rewind 0: no_rearm); a
** DMADescriptorCCE's op (lm_aluop); the index operand of an indirect
** move (IndirectLoad, Gather, IndirectCopy: its indirection_ins, owned)
** and IndirectCopy's num_valid_indices (-1: absent).
*/
typedef struct ls_sdq {
	int n_blocks;
	int *blocks;
	int trig;
	int end;
	int rewind;
	int alu;
	ls_opnd *idx;
	int64_t n_valid;
} ls_sdq;

/* A DMATrigger of the machine: its queue and engine (the rewinds). */
typedef struct ls_strig {
	int queue;
	int eng;
} ls_strig;

/* One instruction, prepared. Indices are global to the machine. */
typedef struct ls_sinst {
	const lm_inst *in;
	lm_opcode op;
	int eng;                /* 0..4: PE ACT DVE POOL SP */
	int fn;                 /* owning function (index in mach->fns) */
	int n_ins, n_outs;
	ls_opnd *ins, *outs;
	int n_deps;
	ls_sdep *deps;          /* within the function; a Loop expanded to
				   its body's instructions */
	int loop;               /* innermost enclosing loop (-1: none) */
	int heads;              /* Loop: the loop it heads, else -1 */
	int is_target;          /* some dependency names it */
	int n_dyn;
	ls_dyn *dyn;            /* LS_MAX_DYN of them when n_dyn (owned) */
	ls_ssyncs sy;           /* sync_info (sync.c) */
	int queue;              /* DMA / SwitchQueueInstance: global queue */
	int qinst;              /* SwitchQueueInstance: global instance */
	int target;             /* Call / NKIKernel: function index */
	int group;              /* CoreBarrier: barrier group index */
	int64_t cycles;         /* cost in cycles of the engine's clock */
	int64_t dur_ps;         /* cost in ps (DMA: issue cost) */
	int64_t dma_bytes;
	int mm_k, mm_m, mm_n;
	int can_read_uninit;    /* the instruction's flag (kept here: the hot
				   path does not touch the lm_inst) */
	char *fault;            /* set: reaching this instruction is an error */
	int is_all;             /* engine ALL: in every engine's stream;
				   each engine runs its own copy, on its
				   registers, unless is_join */
	int is_join;            /* AllEngineBarrier / Exit on ALL: run once
				   when every engine has arrived */
	ls_rinst *reg;          /* RegisterMove / RegisterAlu /
				   CompareAndBranch (owned) */
	ls_sdq *dq;             /* DMATrigger, DMABlock, the queue switches
				   (owned; NULL for the rest) */
	int blk;                /* the function's block holding it (its
				   top-level block when it is in a body) */
	int tblk, fblk;         /* a branch: the block taken (on_true,
				   target), and not taken (on_false); -1 */
} ls_sinst;

/*
** A function, prepared: instructions flattened in program order (a Loop's
** body right after its header), its loops, and per engine the stream of
** instruction indices that engine walks: its own instructions, the Loop
** headers whose bodies hold one of its items, and the items every engine
** passes (Call / NKIKernel descend points, SwitchQueueInstance), up to
** the first top-level Return (n_run: the indices run).
*/
typedef struct ls_sfunc {
	const lm_function *f;
	int mod;
	int n;
	ls_sinst *insts;
	int n_run;
	int n_loops;
	ls_sloop *loops;
	int *stream[LS_ENGINES];
	int n_stream[LS_ENGINES];
	int has_calls;
	int has_targets;
	ls_sdep *deps;          /* storage of the instructions' deps */
	int64_t core;           /* neuron_core_id, or -1 */
	int is_dispatcher;
	lm_strmap index;        /* instruction name -> index + 1 */
	ls_opnd *opnds;         /* storage of the instructions' arrays */
	int *ints;
	int64_t *i64s;
	/* an NKI call site (IT55): this copy of the kernel function runs with
	** its formal allocations / memory locations bound to the caller's */
	int is_callsite;
	int depth;              /* nesting of call sites (0: a module function) */
	lm_strmap bind_allocs;  /* formal allocation -> caller allocation */
	lm_strmap bind_locs;    /* formal memory location -> caller's */
	int n_callsites;        /* IT55 instructions in this function */
	/* its blocks: n_blocks, their names (borrowed), and per engine the
	** stream position of each block's first item (bpos[e][n_blocks]:
	** the stream's end); is_cfg: a branch is among its instructions (a
	** top-level Return then ends the function where it is reached) */
	int n_blocks;
	const char **bnames;
	int *bpos[LS_ENGINES];
	int is_cfg;
} ls_sfunc;

typedef struct ls_squeue {
	const char *name;
	int mod;
	int n_inst;
	int *insts;             /* global instance indices */
} ls_squeue;

typedef struct ls_sqinst {
	const char *name;
	int queue;
	int sem;
	int64_t bw_free_ps;     /* when the instance's bandwidth is free */
	int64_t last_done_ps;   /* last completion (FIFO order) */
} ls_sqinst;

/* A semaphore: a signed 32-bit counter (wrapping), named; with id >= 0
** slot id of core's bank. */
typedef struct ls_ssem {
	const char *name;
	int mod;
	int32_t value;
	int32_t init;           /* the value a run starts from */
	int id, core;
	unsigned ver;           /* moves at every write of value */
} ls_ssem;

/*
** The synchronization of one core (sync.c): its bank (id -> semaphore
** index, -1 undeclared; fixed at preparation) and, for the run, its
** events (a bit each, with the instruction that set it) and the DMAs each
** engine issued that have not completed (Drain).
*/
typedef struct ls_core_sync {
	int bank[256];
	uint64_t evt[4];
	const struct ls_sinst *evt_by[256];
	int64_t dma_out[LS_ENGINES];
	unsigned evt_ver;       /* moves at every change of evt */
} ls_core_sync;

/* DRAM storage: one per root allocation. */
typedef struct ls_storage {
	const char *name;
	int mod;
	const lm_alloc *alloc;
	int64_t bytes;
	uint8_t *data, *init;
	int is_output;
	int is_input;
	/* what preparation filled in (a Const's contents, a host input): the
	** first `filled` bytes, put back by ls_machine_reset */
	int64_t filled;
	const uint8_t *pristine; /* the input's data (borrowed) or own_copy */
	uint8_t *own_copy;
} ls_storage;

/* A module of the run. */
typedef struct ls_smod {
	const lm_module *m;
	const char *path;
	int64_t core;
	int fn_base, n_fns;
	int sem_base, n_sems;
	int queue_base, n_queues;
	lm_strmap sems;         /* name -> global index + 1 */
	lm_strmap queues;       /* name -> global index + 1 */
	lm_strmap qinsts;       /* name -> global index + 1 */
	lm_strmap funcs;        /* name -> global index + 1 */
	lm_strmap storages;     /* DRAM allocation name -> storage index + 1 */
	lm_strmap allocs;       /* allocation name -> lm_alloc */
	lm_strmap regs;         /* register allocation name -> slot + 1 */
	const lm_alloc *last_alloc; /* lookup cache (preparation) */
	/* the barrier slot table: id -> holding group */
	int n_slots, cap_slots;
	int64_t *slot_id;
	int *slot_group;        /* -1: free */
	int *slot_inst_fn, *slot_inst_idx; /* first arrival (messages) */
} ls_smod;

/*
** The compact layout of one per-core space (SB or PSUM). Only the byte
** ranges of a partition that some operand of the run can touch are backed:
** the union of every operand's in-partition extent, as sorted disjoint
** intervals [lo, hi) of the arch's partition, each placed at `base` of a
** compact partition of `pb` bytes (alignment modulo 64 kept). Operands are
** prepared against it; messages map back to arch addresses.
*/
typedef struct ls_layout {
	int64_t arch_pb;        /* the arch's bytes per partition */
	int64_t pb;             /* compact bytes per partition */
	int n;
	int64_t *lo, *hi, *base;
	/* extents collected during preparation */
	int n_ext, cap_ext;
	int64_t *ext;           /* pairs lo, hi */
	int64_t seen[64][2];    /* recently added extents (dedup) */
} ls_layout;

/* Per-core memory. */
typedef struct ls_core_mem {
	uint8_t *sb, *sb_init;
	uint8_t *psum, *psum_init;
	uint8_t *block;         /* one zeroed block holding the four */
	size_t bytes;
	int mapped;             /* block is an mmap (else calloc) */
} ls_core_mem;

/*
** The register files of one core: per engine a 32-bit cell and a written
** bit per register slot of the machine (allocated on first use), and per
** slot the instruction that wrote it last on any engine, with that engine
** (messages).
*/
typedef struct ls_core_regs {
	uint32_t *v[LS_ENGINES];
	uint8_t *w[LS_ENGINES];
	const struct ls_sinst **last;
	signed char *last_eng;
} ls_core_regs;

/* The machine: everything prepared for a run (ls_machine in sim.h). */
struct ls_machine {
	const lm_arch *arch;
	int n_mods;
	ls_smod *mods;
	int n_fns, cap_fns;
	ls_sfunc *fns;
	int n_sems, cap_sems;
	ls_ssem *sems;
	int n_queues, cap_queues;
	ls_squeue *queues;
	int n_qinsts, cap_qinsts;
	ls_sqinst *qinsts;
	int n_storages, cap_storages;
	ls_storage *storages;
	int n_groups, cap_groups;
	char **groups;          /* barrier group names */
	lm_strmap group_index;  /* name -> index + 1 */
	ls_core_mem mem[LS_MAX_CORES];
	int n_regs, cap_regs;   /* register slots (REG allocations) */
	const lm_alloc **reg_allocs; /* by slot (borrowed) */
	ls_core_regs regs[LS_MAX_CORES];
	ls_core_sync *csync[LS_MAX_CORES]; /* allocated on first use */
	struct ls_engacc *acc[LS_MAX_CORES]; /* engacc.c, on first use */
	int n_trigs, cap_trigs; /* DMATriggers (their fire counters) */
	ls_strig *trigs;
	ls_layout sb_layout, psum_layout;
	int64_t sb_part_bytes, psum_part_bytes; /* compact (the layouts' pb) */
	const lm_fileset *files; /* Const files in memory (ls_options) */
	struct ls_race_st *race; /* the race detector of the run, or NULL */
	int multi;              /* side by side (ls_run_multi), else ls_run */
	int runs;               /* runs made: the next one resets first */
};

/* ---- machine.c ---------------------------------------------------------- */

/* Build the machine for n modules (verified, their memory checked:
** ls_check_memory), side by side when multi; inputs bound to storages
** (borrowed until ls_machine_free: a reset copies them in again); Const
** files from files when non-NULL (borrowed while preparing). */
/*
** Name-matched hand-offs of a side-by-side run: an ExternalInput of one
** module named like an ExternalOutput of another module is that output
** (the linker's inpMap does the same). ls_output_owners maps every output
** name to its first declaring module + 1; ls_handoff_owner gives the
** module whose output allocation a of module mi is, or -1.
*/
void ls_output_owners(lm_module *const *mods, int n_mods, lm_strmap *owners);
int ls_handoff_owner(const lm_strmap *owners, int mi, const lm_alloc *a);

int ls_machine_new(ls_machine **out, lm_module *const *mods, int n_mods,
		   int multi, const ls_tensors *inputs,
		   const lm_fileset *files, lm_error *err);
/* Put back the state preparation left: DRAM storages (inputs and Const
** contents as loaded, the rest unwritten), SBUF / PSUM zeroed and
** unwritten, semaphores at their initial values, queue instances idle,
** barrier slot tables empty. */
void ls_machine_reset(ls_machine *mc);
/* Core memory, allocated on first use. */
ls_core_mem *ls_core_memory(ls_machine *mc, int core);
/* Bind an operand to memory of core. */
void ls_bind(ls_machine *mc, int core, const ls_opnd *o, ls_view *v);
/* Describe the element at byte p of view v's space ("'x' partition 3 byte 12"). */
void ls_describe_byte(ls_machine *mc, int core, const ls_opnd *o,
		      const uint8_t *p, char *buf, size_t n);
/* Place operand o (a copy of a symbolic_ap's template) at the element
** offset the issue computed: d->arg at offset v. 0, or -1 with *why
** (caller frees) when the access leaves its memory location. */
int ls_dyn_place(ls_machine *mc, const ls_dyn *d, int64_t v, ls_opnd *o,
		 char **why);
/* Copy the external outputs into out. */
int ls_collect_outputs(ls_machine *mc, ls_tensors *out, lm_error *err);
/* "core C/function F/instruction I" */
void ls_where(const ls_machine *mc, int core, const ls_sinst *si, char *buf,
	      size_t n);

/* ---- apiter.c ----------------------------------------------------------- */

/*
** Gather the view's elements (row-major order) converted to float32 into
** out. Returns NULL, or a pointer to the first element whose bytes were
** never written (when allow_uninit, such elements read as NaN instead).
*/
const uint8_t *ls_gather_f32(const ls_view *v, float *out, int allow_uninit);
/* Gather raw element bytes (count * esize); uninit as above (0xff bytes). */
const uint8_t *ls_gather_raw(const ls_view *v, void *out, int allow_uninit);
/* 1 if the n shadow bytes at init all say written. */
int ls_all_written(const uint8_t *init, int64_t n);
/* Scatter raw element bytes into the view and mark them written. */
void ls_scatter_raw(const ls_view *v, const void *in);
/* The same for the elements i whose mask[i] is set only. */
void ls_scatter_masked(const ls_view *v, const void *in, const uint8_t *mask);
/*
** The same for rows rows of n elements, ld bytes apart from v->data, that
** the caller knows are all written: read (as float32, or raw) or written
** without touching the shadow.
*/
void ls_rows_to_f32(const ls_view *v, int64_t rows, int64_t n, int64_t ld,
		    float *out);
void ls_rows_get_raw(const ls_view *v, int64_t rows, int64_t n, int64_t ld,
		     void *out);
void ls_rows_put_raw(const ls_view *v, int64_t rows, int64_t n, int64_t ld,
		     const void *in);
/* Contiguous conversions (RNE on narrowing). */
void ls_f32_to_dtype(lm_dtype t, const float *in, void *out, int64_t n);
void ls_dtype_to_f32(lm_dtype t, const void *in, float *out, int64_t n);

/* ---- mmkernel.c --------------------------------------------------------- */

/*
** acc[m][n] = fmaf(st[k][m], mv[k][n], acc[m][n]) for k = 0..K-1 in order;
** st is [K][M], mv is [K][N], acc is [M][N], all row-major float32.
*/
void ls_mm_kernel(int K, int M, int N, const float *st, const float *mv,
		  float *acc);
/* The same product over in-place operands (st [K][M], mv [K][N]). */
void ls_mm_kernel_src(int K, int M, int N, const ls_mm_src *st,
		      const ls_mm_src *mv, float *acc);
/* The floats of the biggest padded edge tile of any variant. */
#define LS_MM_MAX_TILE 256
/* The same with acc's rows ldc floats apart (acc[m * ldc + n]). */
void ls_mm_kernel_ld(int K, int M, int N, const ls_mm_src *st,
		     const ls_mm_src *mv, float *acc, int64_t ldc);
/* The kernel variant chosen at run time ("avx512", "avx2", "generic"). */
const char *ls_mm_kernel_name(void);
/* Force a variant (tests / bench) by name, NULL: the best this CPU runs.
** -1 (nothing changed) for an unknown name or one this CPU cannot run. */
int ls_mm_kernel_force(const char *name);
/* The name of variant i (0 .. ), NULL past the last (the generic one). */
const char *ls_mm_kernel_variant(int i);

/* ---- actfunc.c ---------------------------------------------------------- */

/* 1 if the simulator implements activation function f. */
int ls_act_supported(lm_actfunc f);
/* f(x) in float32 (alpha: Lrelu / Prelu slope). */
float ls_act_apply(lm_actfunc f, float x, float alpha);

/* ---- reduce.c ----------------------------------------------------------- */

/* 1 if TensorReduce folds with op. */
int ls_reduce_supported(lm_aluop op);
/* out[r] = the fold of in[r*ld .. r*ld+n-1] by op (negated when negate),
** r = 0..rows-1, in float32 (docs/semantics.md, "TensorReduce"); out may
** be in when ld is n. */
void ls_reduce_rows(lm_aluop op, int negate, const float *in, int64_t rows,
		    int64_t n, int64_t ld, float *out);

/* ---- exec.c ------------------------------------------------------------- */

/* What the semantics of one instruction see. */
typedef struct ls_exec {
	ls_machine *mc;
	int core;
	const ls_sinst *si;
	ls_pending *pend;       /* the write to stage */
	lm_error *err;
	/* scratch (owned by the caller, grown as needed) */
	float *fa, *fb, *fc;
	size_t cap_a, cap_b, cap_c;
	uint8_t *raw;
	size_t cap_raw;
	/* the values of si's dynamic fields at this issue (si->dyn) */
	int64_t dynv[LS_MAX_DYN];
	/* pending Matmults accumulating at completion (ls_mm_defer) */
	ls_pending **deferred;
	int n_deferred, cap_deferred;
	/* row ranges of the shadow found all written (shadow bytes are only
	** ever set during a run, so a range found written stays written) */
	struct ls_written { const uint8_t *init; int64_t rows, rb, ld; }
		written[8];
	int next_written;
	/* under the race detector: the rows an indirect move read (set by
	** ls_exec_start; n_rows -1: none recorded, its ins are read whole) */
	ls_opnd *rows;
	int n_rows, cap_rows;
} ls_exec;

/* Run the read-and-compute half of si; its write is staged in x->pend. */
int ls_exec_start(ls_exec *x);
/* Commit a staged write into memory. */
void ls_exec_commit(ls_pending *p);
void ls_exec_free(ls_exec *x);
void ls_pending_free(ls_pending *p);
/* Float ALU of TensorTensor / TensorScalar; 0 when op is unsupported. */
int ls_alu(lm_aluop op, float a, float b, float *r);
/* For the opcode families outside exec.c: an error of kind code at the
** current instruction ("what (Opcode)"); 1 if its uninitialized reads
** read as NaN; operand o read as raw element bytes (label names it in the
** uninitialized-read error); a scratch buffer of at least n bytes (which
** 0..3, grown, owned by x); the staging buffer of outs[k] (k 0 or 1),
** bound and sized, its write made active. */
int ls_xfail(ls_exec *x, int code, const char *fmt, ...) LM_PRINTF(3, 4);
int ls_xuninit_ok(const ls_exec *x);
int ls_xread_raw(ls_exec *x, const ls_opnd *o, const char *label, void *out);
void *ls_xscratch(ls_exec *x, int which, int64_t n);
uint8_t *ls_xstage(ls_exec *x, int k);

/* ---- engacc.c ----------------------------------------------------------- */

/* EngineAccumulationType ordinals. */
enum { LS_ACC_IDLE, LS_ACC_ZERO, LS_ACC_ACCUMULATE, LS_ACC_ZEROACC,
       LS_ACC_ADDACC, LS_ACC_LOADACC };
typedef struct ls_engacc ls_engacc;
/* The accumulator registers of x's engine on x's core (docs/semantics.md,
** "The accumulator registers"): command cmd with the P rows of fr float32
** values y (the row sums, for the accumulating commands); outs[k] staged
** with the registers of its P partitions. 0 or an error. */
int ls_acc_update(ls_exec *x, int cmd, const float *y, int64_t P,
		  int64_t fr);
int ls_acc_readout(ls_exec *x, int k, int64_t P);
/* ActivationReadAccumulator, ReadActivationAccumulator,
** DveReadAccumulator. */
int ls_exec_readacc(ls_exec *x);
void ls_acc_reset(ls_machine *mc);
void ls_acc_free(ls_machine *mc);

/* ---- shuffle.c ---------------------------------------------------------- */

/* StreamShuffle's mask (its carried `mask` key) into mask[32]: 32 when
** every entry is 0..31 or 255, else the index of the first that is not
** (-1: not an array of 32). */
int ls_shuffle_mask(const lm_inst *in, int *mask);
int ls_exec_shuffle(ls_exec *x);

/* ---- select.c ----------------------------------------------------------- */

/* 1 if operand ins[i] of op may be an immediate (imm_value). */
int ls_sel_imm_ok(lm_opcode op, int i);
/* Select, CopyPredicated (docs/semantics.md). */
int ls_exec_select(ls_exec *x);
int ls_exec_copypred(ls_exec *x);
int ls_exec_rangeselect(ls_exec *x);

/* ---- search.c ----------------------------------------------------------- */

/* Max; MaxIndex, MatchReplace, MaxIndexAndMatchReplace (docs/semantics.md,
** "The top-8 search"). */
int ls_exec_max8(ls_exec *x);
int ls_exec_search8(ls_exec *x);

/* ---- bnstats.c ---------------------------------------------------------- */

/* BNStats, BNStatsAggregate (docs/semantics.md). */
int ls_exec_bnstats(ls_exec *x);
int ls_exec_bnaggr(ls_exec *x);

/* ---- cost.c ------------------------------------------------------------- */

/* Fill si->cycles / dur_ps / dma_bytes / mm_* from shapes. */
void ls_cost_prepare(const lm_arch *a, ls_sinst *si);
/* DMA transfer time of n bytes (latency excluded). */
int64_t ls_cost_dma_ps(const lm_arch *a, int64_t bytes);

/* ---- ctrl.c ------------------------------------------------------------- */

/*
** A position inside one activation of a function: the loops around it
** (ids into the function's loops, outermost first), the iteration each is
** in (0 for its first), and the flattened index of the instruction (or of
** whatever a cursor stands at).
*/
typedef struct ls_pos {
	int64_t bseq;           /* block entries before this one (a function
				   with branches; else 0) */
	int depth;
	const int *loops;
	const int64_t *ords;
	int idx;
} ls_pos;

/* <0, 0, >0 as position a comes before, with, after b in program order
** (block entries first, then the loops and indices). */
int ls_pos_cmp(const ls_sfunc *sf, const ls_pos *a, const ls_pos *b);
/* Iterations of static loop l (an all-zero axis: one pass). */
int64_t ls_loop_trips(const ls_sloop *l);
/* Prepare d from expression e (copied when not linear) for instruction si
** of sf. Returns 0. */
int ls_dyn_prepare(const ls_sfunc *sf, const ls_sinst *si, ls_dyn *d,
		   const struct lm_affine *e);
/* What d is, for messages ("accumulation_flag"). */
const char *ls_dyn_name(const ls_dyn *d);
/* d's value at the induction values iv (by loop depth) on engine eng of
** core (registers: that engine's): 0, or -1 with err. */
int ls_dyn_eval(ls_machine *mc, const ls_sfunc *sf, const ls_sinst *si,
		const ls_dyn *d, const int64_t *iv, int core, int eng,
		int64_t *v, char *err, size_t n);
/* Expression e's value for an item of sf whose innermost loop is loop,
** likewise. */
int ls_expr_eval(ls_machine *mc, const ls_sfunc *sf, int loop,
		 const struct lm_affine *e, const int64_t *iv, int core,
		 int eng, int64_t *v, char *err, size_t n);

/* ---- intalu.c ----------------------------------------------------------- */

/* The class of an ALU op on integer data (docs/semantics.md): how its
** result is fitted into the output dtype; LS_IA_NONE: not modelled. */
enum { LS_IA_NONE, LS_IA_ARITH, LS_IA_BITS, LS_IA_BOOL };
int ls_int_alu_class(lm_aluop op);
/* *r := a op b on 64-bit integers (is_unsigned: uint64, else int64), adt
** a's dtype: 0, -1 for a divide or mod by 0. */
int ls_int_alu(lm_aluop op, int is_unsigned, lm_dtype adt, int64_t a,
	       int64_t b, int64_t *r);
/* v, the result of an op of class cls, stored as integer dtype t and
** loaded back: saturated (arithmetic), wrapped (bits) or as is (0 / 1). */
int64_t ls_int_fit(lm_dtype t, int cls, int is_unsigned, int64_t v);
/* The integer element of dtype t at p, widened by t; store v's low
** bytes. */
int64_t ls_int_load(lm_dtype t, const void *p);
void ls_int_store(lm_dtype t, void *p, int64_t v);

/* ---- regs.c ------------------------------------------------------------- */

/* The lm_aluop of AluOpType ordinal ord (LM_ALU_INVALID: none). */
lm_aluop ls_reg_aluop(int ord);
/* 1 if RegisterAlu computes op. */
int ls_reg_op_modelled(lm_aluop op);
/* *r := a op b at dtype dt (LM_DT_INT32: signed, else unsigned), 32-bit
** wrap-around; divide floors, mod is a - b * (a divide b). 0, -1 for a
** divide or mod by 0, -2 for an op not modelled. */
int ls_reg_alu(lm_aluop op, lm_dtype dt, uint32_t a, uint32_t b, uint32_t *r);
/* *r := a op b in 64 bits (is_signed: int64, else uint64), as
** ls_reg_alu. */
int ls_reg_alu64(lm_aluop op, int is_signed, uint64_t a, uint64_t b,
		 uint64_t *r);
/* The slot of register name of module mi, or -1. */
int ls_reg_slot(const ls_machine *mc, int mi, const char *name);
/* Prepare RegisterMove / RegisterAlu si (si->reg; si->fault when an
** operand or the op is not modelled). */
void ls_reg_prepare(ls_machine *mc, int mi, ls_sinst *si);
/* Run register instruction si on engine eng of core c: 0, or -1 with the
** reason in err. */
int ls_reg_exec(ls_machine *mc, int c, int eng, const ls_sinst *si,
		char *err, size_t n);
/* Write v into register slot of engine eng of core c (si: the writer, for
** messages). */
void ls_reg_set(ls_machine *mc, int c, int eng, int slot, uint32_t v,
		const ls_sinst *si);
/* Register slot's value on engine eng of core c: 0, -1 when that engine
** has not written it. */
int ls_reg_read(ls_machine *mc, int c, int eng, int slot, uint32_t *v);
/* "register 'r', which no instruction has written on DVE (...)" */
void ls_reg_unwritten(const ls_machine *mc, int c, int eng, int slot,
		      char *buf, size_t n);
/* Prepare CompareAndBranch si (si->reg; si->fault when an operand or the
** comp_op is not modelled). */
void ls_cmp_prepare(ls_machine *mc, int mi, ls_sinst *si);
/* Evaluate CompareAndBranch si on engine eng of core c: 0 with *taken,
** or -1 with the reason in err. */
int ls_cmp_exec(ls_machine *mc, int c, int eng, const ls_sinst *si,
		int *taken, char *err, size_t n);
/* Prepare TensorLoad / TensorSave si: the registers (si->reg->src, one,
** or lo and hi for a 64-bit element) and the element's dtype; the tensor
** operand is prepared as any other (si->fault when not modelled). */
void ls_tls_prepare(ls_machine *mc, int mi, ls_sinst *si);
/* TensorLoad si on engine eng of core c: the element read now into the
** register(s). 0, or -1 with err (an uninitialized element among them). */
int ls_tload_exec(ls_machine *mc, int c, int eng, const ls_sinst *si,
		  char *err, size_t n);
/* TensorSave si: the register(s) read now, the element's write staged in
** p (committed at completion). 0, or -1 with err. */
int ls_tsave_stage(ls_machine *mc, int c, int eng, const ls_sinst *si,
		   ls_pending *p, char *err, size_t n);
/* Every register unwritten (a run starts so); the files freed. */
void ls_regs_reset(ls_machine *mc);
void ls_regs_free(ls_machine *mc);

/* ---- sync.c ------------------------------------------------------------- */

/* Core c's synchronization state, allocated (bank undeclared) on first
** use. */
ls_core_sync *ls_core_syncs(ls_machine *mc, int c);
/* Declare the semaphores of module mi in mc->sems and the banks: 0, or
** -1 with the reason in why (two declarations of one slot). */
int ls_sync_declare(ls_machine *mc, int mi, char *why, size_t n);
/* Prepare the sync_info of in (module mi) into sy; the first problem
** into *fault (caller frees) when *fault is NULL. */
void ls_sync_prepare(ls_machine *mc, int mi, const lm_inst *in,
		     ls_ssyncs *sy, char **fault);
void ls_sync_free(ls_ssyncs *sy);
/* The resource of wait first of sy on core c, as a key (a semaphore
** slot, or -1: the core's events) and its version now: while the version
** stays, the wait's outcome stays (ls_sync_key_ver reads it again). */
unsigned ls_sync_wait_key(const ls_machine *mc, int c, const ls_ssyncs *sy,
			  int first, int *key);
unsigned ls_sync_key_ver(const ls_machine *mc, int c, int key);
/* Do the waits of sy hold now for engine eng of core c (all at once)?
** 1 yes, 0 no (*first: the first that does not), -1 a run error in why. */
int ls_sync_ready(ls_machine *mc, int c, int eng, const ls_ssyncs *sy,
		  int *first, char *why, size_t n);
/* sy's item starts on core c: its event waits consume their events. 0,
** or -1 with the reason (an event cleared before it was set). */
int ls_sync_consume(ls_machine *mc, int c, const ls_ssyncs *sy,
		    const ls_sinst *by, char *why, size_t n);
/* sy's item completed on core c: apply its updates (by: the item, for
** messages). 0, or -1 with the reason (an event set twice, a slot not
** declared). */
int ls_sync_update(ls_machine *mc, int c, const ls_ssyncs *sy,
		   const ls_sinst *by, char *why, size_t n);
/* What wait w of engine eng on core c waits for ("semaphore id 3 ('s') of
** core 0 >= 2 (value 1)"). */
void ls_sync_describe(ls_machine *mc, int c, int eng, const ls_ssync *w,
		      char *buf, size_t n);
/* GroupResetSemaphores si on core c: its sema_group slots := 0. 0, or -1
** with the reason (a slot not declared). */
int ls_sync_group_reset(ls_machine *mc, int c, const ls_sinst *si, char *why,
			size_t n);
/* A Return's activation on core c is over: the id bank and the events
** to 0 (named semaphores without an id keep their values). */
void ls_sync_clear_bank(ls_machine *mc, int c);
/* At the end of a run: 0, or -1 with an event left set in why. */
int ls_sync_check_end(ls_machine *mc, char *why, size_t n);
/* The named counter at index i += 1 (a queue instance's DMA), wrapping. */
void ls_sync_bump(ls_machine *mc, int i);
/* Every semaphore at its initial value, events and counters clear. */
void ls_sync_reset(ls_machine *mc);
void ls_sync_free_all(ls_machine *mc);
/* ---- dmablk.c ----------------------------------------------------------- */

/* Is op a DMA descriptor (it runs only in the body of a DMABlock)? */
int ls_op_is_desc(lm_opcode op);
/* The op of DMADescriptorCCE in (LM_ALU_BYPASS when it gives none). */
lm_aluop ls_dmablk_cce_op(const lm_inst *in);
/* The ordinal of enum key `key` of in (type t) carried in extra: 0 when
** absent or null, -1 when it names no value of t (an lm_enumtype). */
int ls_dma_enum(const lm_inst *in, const char *key, int t);
/* The float list `key` of in (constants) into out (at most cap): its
** length, 0 when absent, -1 when it is not a list of numbers or longer. */
int ls_dma_constants(const lm_inst *in, const char *key, float *out,
		     int cap);
/* For TransposeOps t (0..13), the source AP axis at each destination
** position [0..3]; NULL for another value. */
const signed char *ls_dma_perm(int t);
/* si's DMA-side state, made on first use (freed by ls_dmablk_free). */
ls_sdq *ls_dmablk_dq(ls_sinst *si);
/* Is op an indirect move (an index operand in indirection_ins)? */
int ls_op_is_indirect(lm_opcode op);
/* DMABlock si's body is its function's instructions (si, end). */
void ls_dmablk_body(ls_sinst *si, int end);
/* The DMA blocks of function sf (module mi) once it is flattened: each
** trigger's blocks and number, each block's queue agreement, each queue
** switch's rewind (faults for what does not resolve). */
void ls_dmablk_prepare(ls_machine *mc, int mi, ls_sfunc *sf);
/* The index of the DMABlock trigger si fires next with the fire counters
** fire (one per trigger of the machine), and the counter advanced. */
int ls_dmablk_fire(int64_t *fire, const ls_sinst *si);
/* Queue switch si passed by engine eng: the counters of the triggers of
** its queue on that engine back to 0 (unless it is a no_rearm switch). */
void ls_dmablk_rewind(const ls_machine *mc, int64_t *fire,
		      const ls_sinst *si, int eng);
void ls_dmablk_free(ls_sinst *si);

/* ---- waits.c ------------------------------------------------------------ */

/* Why an engine waits (its head instruction cannot start). */
enum { LS_WAIT_NONE = 0, LS_WAIT_DEP, LS_WAIT_SEM };

/* The open wait of one engine: its reason, since when, and the kernel
** call (an index of the scheduler's ls_kacc array, -1: none) whose body
** holds the instruction it waits to start. */
typedef struct ls_waitclock {
	int why;                /* LS_WAIT_*; NONE: not waiting */
	int kern;
	int64_t since;
} ls_waitclock;

/* One DMA transfer of a kernel body, for its time in flight. */
typedef struct ls_kxfer {
	int64_t start, end, bytes;
	int qinst;              /* its queue instance (ls_machine.qinsts) */
} ls_kxfer;

/* A kernel call being measured: its statistics (sim.h), the kernel it
** is nested in (-1), its body's activation, whether the call started
** and completed, its DMA transfers so far. */
typedef struct ls_kacc {
	ls_kernel_stats st;
	int parent;
	int body;
	int started, done;
	ls_kxfer *xf;
	int n_xf, cap_xf;
} ls_kacc;

/* The engine starts waiting for why at now, or its reason or its kernel
** changes (the time so far goes to the old ones); same: nothing. ks: the
** kernel calls (kern an index, -1: none; NULL when there are none). */
void ls_wait_begin(ls_core_stats *st, ls_kacc *ks, int kern, int eng,
		   ls_waitclock *w, int why, int64_t now);
/* The engine's head instruction starts at now: close the open wait. */
void ls_wait_end(ls_core_stats *st, ls_kacc *ks, int eng, ls_waitclock *w,
		 int64_t now);
/* A CoreBarrier (or a join) of kernel kern (-1: none) on eng held from
** arrived to released. */
void ls_wait_barrier(ls_core_stats *st, ls_kacc *ks, int kern, int eng,
		     int64_t arrived, int64_t released);
/* At the end of a run of run_ps: each engine's idle time (the rest). */
void ls_wait_finish(ls_core_stats *st, int64_t run_ps);
/* Kernel kern and those it is nested in: engine eng busy from t0 to t1
** (count: an instruction, not a back edge). */
void ls_kern_busy(ls_kacc *ks, int kern, int eng, int64_t t0, int64_t t1,
		  int count);
/* Kernel kern and those it is nested in: a body DMA of bytes moved from
** start to end on queue instance qinst. */
void ls_kern_dma(ls_kacc *ks, int kern, int qinst, int64_t bytes,
		 int64_t start, int64_t end);
/* The kernel's idle times, DMA time in flight (in all and per queue
** instance of mc) and critical engine, at the end of the run (its xfer
** list freed). */
void ls_kern_finish(ls_kacc *k, const ls_machine *mc);

/* ---- trace.c ------------------------------------------------------------ */

/* One slice of the trace: an instruction on its engine (a CoreBarrier
** from arrival to release), or a DMA transfer on its queue instance. */
typedef struct ls_trace_ev {
	int core, track;        /* track: 0..4 engines, 5 + qinst: DMA */
	const ls_sinst *si;
	int act, idx;           /* the launched copy and the index in it */
	int64_t start, dur;
} ls_trace_ev;

typedef struct ls_trace {
	int n, cap;
	ls_trace_ev *ev;
} ls_trace;

void ls_trace_add(ls_trace *t, int core, int track, const ls_sinst *si,
		  int act, int idx, int64_t start, int64_t dur);
int ls_trace_write(const ls_trace *t, const ls_machine *mc, const char *path,
		   lm_error *err);
void ls_trace_free(ls_trace *t);

/* ---- race.c ------------------------------------------------------------- */

/*
** The happens-before race detector of one run (docs/race.md). Agents:
** engine e of core c (ls_race_agent) and per queue instance its
** descriptor reads and its completions (ls_race_qagent). The scheduler
** ticks an agent for each event it runs, joins clocks where it orders
** things, and reports every access; sync.c logs the semaphore values it
** writes with the clock set by ls_race_set_cur, and a wait joins into
** the clock set by ls_race_set_tgt.
*/
typedef struct ls_race_st ls_race_st;
ls_race_st *ls_race_new(ls_machine *mc);
void ls_race_free(ls_race_st *R);
int ls_race_agent(const ls_race_st *R, int core, int eng);
int ls_race_qagent(const ls_race_st *R, int qi, int is_done);
uint32_t *ls_race_vc(ls_race_st *R, int agent);
void ls_race_join(const ls_race_st *R, uint32_t *dst, const uint32_t *src);
void ls_race_copy(const ls_race_st *R, uint32_t *dst, const uint32_t *src);
/* A saved clock (id >= 1), zero at first. */
int ls_race_vc_new(ls_race_st *R);
uint32_t *ls_race_vc_get(ls_race_st *R, int id);
/* agent's next event is si: its clock + 1, returned. */
uint32_t ls_race_tick(ls_race_st *R, int agent, const ls_sinst *si);
void ls_race_set_cur(ls_race_st *R, const uint32_t *vc);
const uint32_t *ls_race_cur(const ls_race_st *R);
void ls_race_set_tgt(ls_race_st *R, uint32_t *vc);
/* The completions of the DMAs engine eng of core issued (Drain). */
uint32_t *ls_race_drain(ls_race_st *R, int core, int eng);
/* An access record of si (iteration: depth pairs loop id, iv). */
int ls_race_rec(ls_race_st *R, int agent, uint32_t clock, const ls_sinst *si,
		int core, int eng, const int *loops, const int64_t *ivs,
		int depth);
/* A copy of record from at another epoch and engine. */
int ls_race_rec_as(ls_race_st *R, int from, int agent, uint32_t clock,
		   int eng);
/* Record r (clock v) reads or writes operand o bound on core; mask
** (when not NULL, one byte per element in walk order): the elements
** written. */
void ls_race_access(ls_race_st *R, int r, const uint32_t *v, int core,
		    const ls_opnd *o, int is_write, const uint8_t *mask);
void ls_race_host_read(ls_race_st *R, const uint32_t *h, int st);
void ls_race_set_limit(ls_race_st *R, int64_t limit);
int ls_race_over(const ls_race_st *R, int64_t *bytes);
void ls_race_barrier(ls_race_st *R, int mod, int64_t id, int group,
		     int agent, const ls_sinst *si, int core, int eng);
int64_t ls_race_shadow_bytes(const ls_race_st *R);
int64_t ls_race_found(const ls_race_st *R);
/* Semaphore sem took value, by an update (is_write: a value written,
** sem-wr-imm or a reset, not one added to the value before). */
void ls_race_sem_set(ls_race_st *R, int sem, int32_t value, int is_write);
void ls_race_sem_wait(ls_race_st *R, int sem, int64_t thr);
void ls_race_evt_set(ls_race_st *R, int core, int id);
void ls_race_evt_wait(ls_race_st *R, int core, int id);
/* The completed instances of a dependency target (a history). */
int ls_race_hist_new(ls_race_st *R);
void ls_race_hist_push(ls_race_st *R, int h, int64_t bseq,
		       const int64_t *ords, int depth, const uint32_t *vc);
void ls_race_hist_join(ls_race_st *R, int h, const ls_sfunc *sf, int a,
		       const ls_pos *q, uint32_t *dst);
/* Keep the first uninitialized-read error e of the run (exec.c); the
** kept error when the run found no race, else NULL. */
void ls_race_keep_error(ls_race_st *R, const lm_error *e);
const lm_error *ls_race_kept_error(const ls_race_st *R);
/* err (the run's error) gets "; --race: N races before it, first: ..."
** when races were found. */
void ls_race_note_error(ls_race_st *R, lm_error *err);
/* The races into out (ls_result's n_races, races, races_found). */
void ls_race_collect(ls_race_st *R, ls_result *out);
void ls_races_free(ls_race *r, int n);
/* Join into R's wait clock what the waits of sy (holding now for engine
** eng of core c) are ordered after (sync.c). */
void ls_sync_race_join(ls_machine *mc, int c, int eng, const ls_ssyncs *sy);
/* The arch byte of compact byte x of a partition (machine.c). */
int64_t ls_layout_unmap(const ls_layout *l, int64_t x);

/* Engine index names ("PE", "Activation", ...). */
const char *ls_engine_name(int eng);

#endif
