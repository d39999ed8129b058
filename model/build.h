/*
** build.h -- building IR in memory: the one way modules, functions,
** blocks, allocations, instructions and their operands are made outside
** the loader (the generator, the kernel codegen, the tests).
**
** Two layers, one file:
**
**   lm_b_init_* / lm_b_append_* / lm_b_set_*  fill IR objects the caller
**       holds (a module, a function, a block, an instruction). They check
**       nothing and cannot fail; what they are given is copied (strings,
**       arrays), what they fill is owned by the object it lands in. A
**       setter of op fields asserts the instruction's opcode (calling it
**       on another opcode is a bug of the caller, not an input error).
**       For code that keeps names apart itself (the kernel codegen builds
**       a function that is renamed into its module later).
**
**   lm_builder (lm_b_new ... lm_b_finish)  a module under construction
**       and the module-wide name sets the verifier keeps (semaphores,
**       queues, queue instances, functions, allocations, memory
**       locations, instructions). A name given twice, or a reference to a
**       name the module does not have (an operand's allocation, a wait's
**       semaphore, a DMA's queue), is refused through lm_error: the first
**       failure is kept, written to the caller's lm_error, and every later
**       call does nothing and returns it again (the calls need not be
**       checked one by one; lm_b_finish reports it). Calls that take an
**       object a failed call returned (NULL) return the builder's error.
**
** Pointers the builder returns point into the module's arrays: an
** lm_function * lives until the next lm_b_function, an lm_block * until
** the next lm_b_block of its function, an lm_alloc * until the next
** allocation of its function, an lm_inst * until the next instruction of
** its block, an lm_arg * until the next operand on that side of its
** instruction. The builder does not verify: a finished module is what
** lm_verify judges, like a loaded one, and one that verifies saves and
** loads back to the same module.
*/
#ifndef LNCSIM_BUILD_H
#define LNCSIM_BUILD_H

#include "module.h"

/* Which operand list lm_b_ap / lm_b_append_ap add to. */
enum { LM_B_IN = 0, LM_B_OUT = 1 };

/* ---- filling IR objects (no checks, no failure) -------------------------- */

/* The module's file: path (NULL: built in memory, ""), its directory (the
** base of relative `file` paths) and the name messages use when the module
** has none (the directory above nc<c>/sg<k>/, else the file's). */
void lm_b_set_path(lm_module *m, const char *path);

lm_semaphore *lm_b_append_semaphore(lm_module *m, const char *name,
				    int64_t init);
/* A queue with no instance yet (the verifier wants one at least). */
lm_queue *lm_b_append_queue(lm_module *m, const char *name);
lm_qinstance *lm_b_append_qinstance(lm_queue *q, const char *name,
				    const char *semaphore);
lm_function *lm_b_append_function(lm_module *m, const char *name);
/* The function's kind (written: regular, dispatcher, nki). */
void lm_b_set_kind(lm_function *f, lm_funckind kind);
lm_block *lm_b_append_block(lm_function *f, const char *name);

/* An allocation of tensor_shape shape[0..n_shape), no memory location. */
lm_alloc *lm_b_append_alloc(lm_function *f, const char *name,
			    lm_tensorkind kind, lm_dtype dt,
			    const int64_t *shape, int n_shape);
/*
** A memory location of a, named as a: type, addr (bytes: the DRAM
** address, or the offset within each partition), dims[0..n_dims)
** ([partitions, bytes_per_partition]), base (the first partition),
** allocated; bank is addr's PSUM bank (0 off PSUM).
*/
lm_memloc *lm_b_append_memloc(lm_alloc *a, lm_memtype type, int64_t addr,
			      const int64_t *dims, int n_dims, int64_t base);
void lm_b_set_file(lm_alloc *a, const char *file);
/* A MemoryAddressSpace ("Local", "Shared", "Debug"). */
void lm_b_set_addr_space(lm_alloc *a, const char *space);
/* a is a view of allocation producer of core (remote_local_target). */
void lm_b_set_view(lm_alloc *a, const char *producer, int64_t core);

/*
** An instruction in *in (whatever it held is not freed): opcode op on
** engine eng, named name (NULL for a Loop), with the loader's defaults
** (scale 1, renumber true, TensorScalar's op1 bypass). The caller owns
** it (lm_inst_clear) until it moves it into a block.
*/
void lm_b_init_inst(lm_inst *in, lm_opcode op, lm_engine eng,
		    const char *name);
/* lm_b_init_inst on a new last instruction of blk. */
lm_inst *lm_b_append_inst(lm_block *blk, lm_opcode op, lm_engine eng,
			  const char *name);
/*
** A physical_ap operand in *a (whatever it held is not freed): allocation
** alloc, memory location memloc (NULL: alloc), dtype dt, access pattern
** ap[0..n_ap) from element offset within the partitions from
** start_partition on (the IR's form: offset and start partition apart).
*/
void lm_b_init_ap(lm_arg *a, const char *alloc, const char *memloc,
		  lm_dtype dt, int64_t start_partition, int64_t offset,
		  const lm_appair *ap, int n_ap);
/* lm_b_init_ap on a new last operand of in's ins (LM_B_IN) or outs. */
lm_arg *lm_b_append_ap(lm_inst *in, int side, const char *alloc,
		       const char *memloc, lm_dtype dt,
		       int64_t start_partition, int64_t offset,
		       const lm_appair *ap, int n_ap);
/* An imm_value input. */
lm_arg *lm_b_append_imm(lm_inst *in, lm_dtype dt, double value);

/*
** Op fields. Each asserts its opcodes; strings are copied. Queues,
** instance names, targets and kernel maps go through lm_inst_set_str and
** lm_inst_set_kvs, dependencies, waits and signals through
** lm_inst_add_dep / lm_inst_add_wait / lm_inst_add_signal (module.h).
*/
/* Matmult: accumulation_flag bits start (zero, then write) and stop (the
** group's last), and is_transpose. */
void lm_b_set_matmult(lm_inst *in, int start, int stop, int is_transpose);
/* Activation: the function and its input scale. */
void lm_b_set_activation(lm_inst *in, lm_actfunc func, double scale);
/* TensorTensor's op, TensorScalarAffineSelect's compare_op. */
void lm_b_set_alu(lm_inst *in, lm_aluop op);
/* TensorScalar: out = (in op0 const0) op1 const1; reverse swaps the
** operands of that step. */
void lm_b_set_tensor_scalar(lm_inst *in, lm_aluop op0, double const0,
			    int reverse0, lm_aluop op1, double const1,
			    int reverse1);
/* Memset: a MemsetMode and the integer constant it writes. */
void lm_b_set_memset(lm_inst *in, const char *mode, int64_t constant);
/* Memset: a float value written instead of the constant. */
void lm_b_set_memset_value(lm_inst *in, double value);
/* Iota / TensorScalarAffineSelect: base + channel_multiplier * partition
** + the pattern's walk. */
void lm_b_set_pattern(lm_inst *in, int64_t base, int64_t channel_multiplier,
		      const lm_appair *pattern, int n);
/* TensorScalarAffineSelect: the value written where the compare fails. */
void lm_b_set_fill(lm_inst *in, double fill_value);
/* CoreBarrier: id, the cores that meet, group (NULL: the instruction's
** name). */
void lm_b_set_barrier(lm_inst *in, int64_t id, const int64_t *cores,
		      int n_cores, const char *group);
/* CoreBarrier: written renumber flag (false: the linker keeps the id). */
void lm_b_set_renumber(lm_inst *in, int renumber);

struct lm_affine;
/* A new last block of in's nested body (Loop, DynamicForLoop, DoWhile,
** DMABlock); the instructions it holds are appended with
** lm_b_append_inst. */
lm_block *lm_b_append_body(lm_inst *in, const char *name);
/* Loop: its LoopAxis (name NULL: none). */
void lm_b_set_loop_axis(lm_inst *in, const char *name, int64_t lb,
			int64_t ub, int64_t stride);
/* DynamicForLoop: its DynamicForLoopAxis, copies of the three bounds. */
void lm_b_set_dynloop_axis(lm_inst *in, const char *name,
			   const struct lm_affine *lb,
			   const struct lm_affine *ub,
			   const struct lm_affine *stride);
/* Loop: one more of its registers (a register allocation's name). */
void lm_b_add_loop_register(lm_inst *in, const char *reg);
/* DoWhile: its cond, a copy of e. */
void lm_b_set_cond(lm_inst *in, const struct lm_affine *e);
/* CompareAndBranch: comp_op (a BranchCompareOp ordinal) and the blocks
** it branches to. */
void lm_b_set_branch(lm_inst *in, int comp_op, const char *on_true,
		     const char *on_false);
/* UnconditionalBranch: its target block. */
void lm_b_set_jump(lm_inst *in, const char *target);
/* RegisterAlu: op (an AluOpType ordinal) and is_64bit. */
void lm_b_set_register_alu(lm_inst *in, int op, int is_64bit);
/* GroupResetSemaphores: the semaphore ids ids[0..n) it resets. */
void lm_b_set_sema_group(lm_inst *in, const int64_t *ids, int n);
/* DMATrigger: one more DMABlock (by name) it fires. */
void lm_b_add_dma_block(lm_inst *in, const char *block);

/* ---- the checked builder ------------------------------------------------- */

typedef struct lm_builder lm_builder;

/*
** A builder holding a new empty module of arch (gen2, gen3, gen4) and
** BIR version (1 or 2), built in memory (path ""). err receives the first
** failure (it must outlive the builder; NULL: the builder keeps it, and
** lm_b_status still says there was one). Never NULL; a bad arch or
** version is the builder's first failure.
*/
lm_builder *lm_b_new(const char *arch, int64_t version, lm_error *err);
/* Hand the module over: 0 with *out owning it (lm_module_free), or the
** first failure with *out NULL. The builder is freed either way. */
int lm_b_finish(lm_builder *b, lm_module **out);
/* Drop the builder and its module (NULL: nothing). */
void lm_b_free(lm_builder *b);
/* 0, or the first failure (LM_EINPUT). */
int lm_b_status(const lm_builder *b);
/* The module under construction (the builder keeps it): to read, or to
** change through the fillers; the names the builder has seen stay. */
lm_module *lm_b_module(lm_builder *b);

/* The module's file (lm_b_set_path), name and attributes.neuron_core_id. */
int lm_b_path(lm_builder *b, const char *path);
int lm_b_name(lm_builder *b, const char *name);
int lm_b_core_id(lm_builder *b, int64_t core);

lm_semaphore *lm_b_semaphore(lm_builder *b, const char *name, int64_t init);
lm_queue *lm_b_queue(lm_builder *b, const char *name);
/* An instance of queue, counted by semaphore (both must exist). */
lm_qinstance *lm_b_qinstance(lm_builder *b, const char *queue,
			     const char *name, const char *semaphore);

/* A function, then the current one (its blocks and allocations follow). */
lm_function *lm_b_function(lm_builder *b, const char *name);
/* A block of the current function, then the current one. */
lm_block *lm_b_block(lm_builder *b, const char *name);

/* An allocation of the current function (lm_b_append_alloc). */
lm_alloc *lm_b_alloc(lm_builder *b, const char *name, lm_tensorkind kind,
		     lm_dtype dt, const int64_t *shape, int n_shape);
/* a's memory location (lm_b_append_memloc); one per allocation here. */
lm_memloc *lm_b_memloc(lm_builder *b, lm_alloc *a, lm_memtype type,
		       int64_t addr, const int64_t *dims, int n_dims,
		       int64_t base);
/* An allocation in the wire form (one JSON object, the loader's rules),
** added to the current function. */
lm_alloc *lm_b_alloc_json(lm_builder *b, const char *text);

/* An instruction of the current block (lm_b_init_inst); a Loop or a
** carried opcode (LM_OP_OTHER) comes through lm_b_inst_json, and so does
** an instruction with a nested body whose names the builder is to keep
** (those of lm_b_append_body are not seen). */
lm_inst *lm_b_inst(lm_builder *b, lm_opcode op, lm_engine eng,
		   const char *name);
/*
** An instruction in the wire form (one JSON object, the loader's rules,
** its SB / PSUM offsets holding the start partition) added to the current
** block; its physical operands name allocations added before it.
*/
lm_inst *lm_b_inst_json(lm_builder *b, const char *text);

/* A physical_ap on a module allocation (lm_b_append_ap; the memory
** location is the allocation's). */
lm_arg *lm_b_ap(lm_builder *b, lm_inst *in, int side, const char *alloc,
		lm_dtype dt, int64_t start_partition, int64_t offset,
		const lm_appair *ap, int n_ap);
lm_arg *lm_b_imm(lm_builder *b, lm_inst *in, lm_dtype dt, double value);
/* A wait (semaphore >= value) and a signal (semaphore + 1) on a module
** semaphore. */
int lm_b_wait(lm_builder *b, lm_inst *in, const char *semaphore,
	      int64_t value);
int lm_b_signal(lm_builder *b, lm_inst *in, const char *semaphore);
/* The queue of a DMA (DMACopy, Load, Save), a DMATrigger or a DMABlock,
** a module queue. */
int lm_b_dma_queue(lm_builder *b, lm_inst *in, const char *queue);
/* A SwitchQueueInstance to instance of queue. */
int lm_b_switch_queue(lm_builder *b, lm_inst *in, const char *queue,
		      const char *instance);

#endif
