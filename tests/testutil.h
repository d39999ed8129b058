/*
** testutil.h -- the helpers of the check suites, one copy each: files and
** the lncsim binary, the suite runner, modules (fixtures, loading, parsing,
** counting), KLR fixtures, and the simulator suites' module bench (tb_*,
** on the IR builder). A helper two suites need lives here, not in each.
*/
#ifndef LNCSIM_TESTUTIL_H
#define LNCSIM_TESTUTIL_H

#include <check.h>
#include <math.h>
#include <stddef.h>
#include "common.h"
#include "module.h"
#include "build.h"
#include "sim.h"

/* $srcdir-relative path (tests run from the build dir); caller frees. */
char *tu_srcpath(const char *rel);
/* The modules of the source tree's directory rel (a module set, as
** lncsim takes it) into m[0..*n), each loaded and verified. */
void tu_load_example(const char *rel, lm_module **m, int *n);
/* Path to the shared/ fixtures beside the source tree, or NULL if absent. */
char *tu_sharedpath(const char *rel);
/*
** A fresh empty directory inside the suite's scratch directory
** (./tmp-SUITE-PID-XXXXXX in the build tree); caller frees the string.
** tu_main removes the scratch directory when the suite passed and keeps it
** when a case failed; it also points LNCSIM_DB into it.
*/
char *tu_tmpdir(const char *tag);
/* The environment a browser run from a test gets: HOME and the XDG
** config, cache and data directories all under home, so that nothing it
** saves (a profile, a crash report, desktop settings) lands in the
** user's. A shell word list to put before the command; free it. */
char *tu_browser_env(const char *home);
/* Remove a directory tree without following symbolic links; 0 or -1. */
int tu_rm_tree(const char *dir);
/* Write text to dir/name (creating dirs); returns the malloc'd path. */
char *tu_write(const char *dir, const char *name, const char *text);
/* Remove path and, for a directory, everything below it (no symlink is
** followed). */
void tu_rmtree(const char *path);
/* Read a whole file into a malloc'd NUL-terminated string (NULL if missing). */
char *tu_read(const char *path);
/* Write n bytes to dir/name; returns the malloc'd path. */
char *tu_write_bytes(const char *dir, const char *name, const void *b,
		     size_t n);
/* s with every occurrence of a (not empty) replaced by b; caller frees. */
char *tu_replace_all(const char *s, const char *a, const char *b);
/* Copy the file src to dir/name. */
void tu_copy(const char *src, const char *dir, const char *name);

/* Result of running the lncsim binary. */
typedef struct tu_run {
	int status;  /* exit status, or 128+signal */
	char *out;   /* stdout */
	char *err;   /* stderr */
} tu_run;

/*
** Run `lncsim ARGS...` (NULL-terminated argv after the program name) with
** cwd (NULL: current). The binary is $LNCSIM or ../lncsim.
*/
tu_run tu_lncsim(const char *cwd, const char *arg0, ...);
tu_run tu_lncsimv(const char *cwd, const char *const *argv);

/* How tu_lncsimo runs lncsim. */
typedef struct tu_opts {
	int unprivileged;      /* as user nobody when root (file modes count:
				  root writes read-only files) */
	long long fsize_limit; /* > 0: RLIMIT_FSIZE in bytes, SIGXFSZ ignored:
				  writes past it fail as on a full disk */
	unsigned timeout_s;    /* > 0: SIGALRM after that many seconds (a
				  hung run ends with status 128+14) */
	const char *program;   /* NULL: lncsim; else this program (found in
				  $PATH) runs argv, argv[0] its name */
} tu_opts;
#define TU_OPTS_INIT { 0, 0, 0, NULL }
/* tu_lncsimv with options; status 125 when they cannot be applied (the
** caller skips). */
tu_run tu_lncsimo(const tu_opts *o, const char *cwd, const char *const *argv);

/* A command started and not waited for yet (tu_start, tu_finish). */
typedef struct tu_proc {
	int pid;
	int out_fd, err_fd;
} tu_proc;
/* Start what tu_lncsimo runs, without waiting: p->pid its process. */
void tu_start(const tu_opts *o, const char *cwd, const char *const *argv,
	      tu_proc *p);
/* Wait for it; its status and output (as tu_lncsimo gives them). */
tu_run tu_finish(tu_proc *p);
/* The pids whose parent is pid (from /proc), into out (at most max);
** how many. */
int tu_children(int pid, int *out, int max);

/*
** The fuzz cases of campaign in the database at path as sorted text
** lines, everything a case's run stores but what differs from run to
** run of the same seed (ids, uuids, times, the campaign's name): the
** runs row, the case row, executions, core stats, matmuls, tensors.
** Caller frees.
*/
char *tu_campaign_dump(const char *path, const char *campaign);
/* Whether tu_opts.unprivileged can work here. */
int tu_can_drop_root(void);
void tu_run_free(tu_run *r);

/*
** Run a suite in TAP mode and return the process exit status. LNCSIM_DB
** is set to a file in the scratch directory for the whole suite; a suite
** that changes ./lncsim.db fails ("Bail out!"), a passing suite leaves
** nothing behind.
*/
int tu_main(Suite *s);

/* ---- modules ------------------------------------------------------------ */

/* tests/fixtures/<dir>/<name> in the source tree; caller frees. */
char *tu_fixture(const char *dir, const char *name);
/* Copy the fixture <dir>/<name> into the directory to, as name. */
void tu_copy_fixture(const char *dir, const char *name, const char *to);
/* A module file loaded (the test fails when it does not load). */
lm_module *tu_load(const char *path);
/* Text parsed as the module file t.json: the module, or NULL with err
** filled. */
lm_module *tu_parse(const char *text, lm_error *err);
/* tu_parse that must succeed. */
lm_module *tu_parse_ok(const char *text);
/* The fixture <dir>/<name>'s text with the pairs (a, b) of subs replaced
** (NULL ends; each a must occur), parsed (the test fails when it does not
** load). */
lm_module *tu_fixture_subst(const char *dir, const char *name,
			    const char *const *subs);
/* tu_parse that must fail, with a message that starts with "t.json: "
** and holds needle. */
void tu_expect_fail(const char *text, const char *needle);
/* Instructions of opcode op in the top-level blocks of every function. */
int tu_count_op(const lm_module *m, lm_opcode op);
/* tests/fixtures/klr/<name>.json packed into dir/<name>.klr, its version
** replaced by "A.B.C" when version is not NULL. */
void tu_pack_klr(const char *name, const char *dir, const char *version);
/* The committed KLR file klr_rel (relative to the source tree) is what
** `lncsim klr pack` makes of json_rel, byte for byte. */
void tu_check_packed(const char *json_rel, const char *klr_rel);

/* ---- the simulator suites' module bench ---------------------------------- */

/*
** A per-core module on the IR builder (model/build.h): gen3, semaphores
** s0..s3, queue q0 -> s0, queue q1 with instances q1a -> s1 and q1b -> s2,
** one function sg0000 with one block b. Allocations are made in the IR
** (tb_dram, tb_sb, tb_psum), instructions are given in the wire form
** (tb_inst, one JSON object each: the suites spell the keys the simulator
** refuses or models as the compiler writes them). Each object goes in as
** it is given, so an instruction names allocations made before it; a
** failing call stops the test with the builder's message.
*/
typedef struct tb {
	lm_builder *b;         /* the module (NULL once tb_module took it) */
	lm_error err;          /* the builder's first failure */
	int64_t dram_addr, sb_addr;
} tb;

void tb_init(tb *t);
void tb_free(tb *t);
/* A further function (kind nki when nki) with one block b; what follows
** goes into it. */
void tb_function(tb *t, const char *name, int nki);
int tb_esize(const char *dt);
/* An allocation [rows, cols] of dtype dt at addr of memory type mt. */
void tb_alloc(tb *t, const char *name, lm_tensorkind kind, const char *dt,
	      int rows, int cols, lm_memtype mt, int64_t addr);
/* A DRAM allocation [rows, cols] of kind (ExternalInput, Internal, ...). */
void tb_dram(tb *t, const char *name, const char *kind, const char *dt,
	     int rows, int cols);
/* An SB tensor [parts, free] at the next free SB offset. */
void tb_sb(tb *t, const char *name, const char *dt, int parts, int free);
/* A float32 PSUM tensor [parts, free] in bank. */
void tb_psum(tb *t, const char *name, int parts, int free, int bank);
/* An allocation in the wire form (keys the model carries as they are). */
void tb_alloc_raw(tb *t, const char *json);
/* One instruction in the wire form (a JSON object, printf-style). */
void tb_inst(tb *t, const char *fmt, ...) LM_PRINTF(2, 3);
/* The wire text of an SB/PSUM operand [parts, free] from element off, for
** tb_inst (one of 16 rotating buffers). */
const char *AP(const char *name, const char *dt, int parts, int free,
	       int off);
/* AP with a first pair that steps pe elements (one partition of a
** location of pe elements per partition). */
const char *APS(const char *name, const char *dt, int parts, int free,
		int off, int pe);
/* AP's operand [parts, free] from element 0, made in the IR. */
void tb_op(tb *t, lm_inst *in, int side, const char *name, const char *dt,
	   int parts, int free);
/* The module's wire text as core core (caller frees); the builder keeps
** the module. */
char *tb_json(tb *t, int core);
/* The module as core core, file tb-core<core>.json, verified (the test
** fails otherwise); the builder is done (tb_free still may be called). */
lm_module *tb_module(tb *t, int core);
/* The common harness: x [P, F] (dtype dt_in, ExternalInput) is DMA'd into
** SB xs on q0 (s0 +1); the caller's instructions compute ys (dt_out);
** tb_io_end stores ys into the ExternalOutput y after instruction dep. */
void tb_io(tb *t, const char *dt_in, const char *dt_out, int P, int F);
void tb_io_end(tb *t, const char *dt_out, int P, int F, const char *dep);
/* Run n modules (1: ls_run, else side by side) with x [P, F] (float32,
** converted to the tensor) as input x when given. */
int tb_run(lm_module **m, int n, const float *x, int P, int F,
	   const ls_options *o, ls_result *r, lm_error *err);
/* tb_run of one module. */
int tb_run1(lm_module *m, const float *x, int P, int F, const ls_options *o,
	    ls_result *r, lm_error *err);
/* Output element i of tensor name as float32 (both must exist). */
float tb_out(const ls_result *r, const char *name, int64_t i);
uint32_t tb_bits(float f);
/* Deterministic test data in [-2, 2). */
void tb_fill(float *v, int64_t n, uint32_t seed);

/* Bit-equal, or both NaN. */
#define ck_assert_same_f(a, b) do { \
	float a_ = (a), b_ = (b); \
	ck_assert_msg((isnan(a_) && isnan(b_)) || \
		      lm_f32_bits(a_) == lm_f32_bits(b_), \
		      "%s = %.9g (0x%08x) != %s = %.9g (0x%08x)", #a, \
		      (double)a_, lm_f32_bits(a_), #b, (double)b_, \
		      lm_f32_bits(b_)); \
} while (0)

/* One integer from a query on a read-only connection of its own to the
** database at path (-1: no row); the test fails when the query does not
** prepare. */
int64_t tu_sql_int(const char *path, const char *sql);

#define ck_assert_contains(hay, needle) do { \
	const char *hay_ = (hay); \
	ck_assert_msg(hay_ != NULL && strstr(hay_, (needle)) != NULL, \
		      "expected \"%s\" in \"%s\"", (needle), \
		      hay_ ? hay_ : "(null)"); \
} while (0)

/* ---- kernel lowering ------------------------------------------------------ */

struct lp_warnings;
/* m lowered (kernels inlined when do_inline), verified; the test fails
** otherwise. Warnings into w (NULL: dropped). Caller frees. */
lm_module *tu_lower_ok(const lm_module *m, int do_inline,
		       struct lp_warnings *w);
/* Every tensor of a also in b with the same dtype, count and bytes, and
** no other (a not empty). */
void tu_same_outputs(const ls_tensors *a, const ls_tensors *b);

#endif
