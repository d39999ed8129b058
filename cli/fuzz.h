/*
** fuzz.h -- the parts of `lncsim fuzz` every process of a campaign shares:
** the generator options of the campaign (fz_config), the result record a
** case comes back as (fz_record, a versioned byte string, so it can cross
** a pipe or an MPI message), the failure signature, the repro line, and
** the case itself (gen + diff in memory, kept on disk when it fails).
**
** The processes (docs/distributed.md): a coordinator hands seeds out and
** writes the one database; workers run cases and send records back. A
** worker never opens the database.
*/
#ifndef LNCSIM_FUZZ_H
#define LNCSIM_FUZZ_H

#include "common.h"
#include "gen.h"
#include "sim.h"

/* What every case of a campaign is generated and checked with. */
typedef struct fz_config {
	int lo, hi;              /* core-count range */
	ls_gen_size size;
	int schedules;           /* perturbed schedules per case */
	unsigned skip;           /* linker steps switched off (LK_SKIP bits) */
	char keep[1024];         /* --keep-failures DIR, "" none */
	int null_cases;          /* measuring the coordinator: every case
				    passes at once, nothing is generated */
	int case_timeout_ms;     /* how long a case may run before it is
				    killed and recorded as a timeout; 0: no
				    limit */
	int loops;               /* the generator's --loops */
	int race;                /* --race: a race in either run fails */
	int dynamic;             /* its --dynamic */
	int sync;                /* its --sync (LS_GEN_SYNC_*) */
	int mix;                 /* each case's loops, dynamic and sync drawn
				    by a hash of its seed (fz_case_form);
				    the three fields above unused */
	int compute;             /* the generator's --compute, in the cases
				    ordered by dependencies */
	int by_name;             /* its --by-name */
} fz_config;

/* --case-timeout's default, milliseconds (ten minutes). */
#define FZ_CASE_TIMEOUT_MS 600000
/* Its largest value: a week. */
#define FZ_CASE_TIMEOUT_MAX_MS (7 * 86400 * 1000)

#define FZ_CONFIG_INIT \
	{ 1, 4, LS_GEN_SMALL, 0, 0, "", 0, FZ_CASE_TIMEOUT_MS, 0, 0, 0, 0, 1, 0, \
	  0 }

/* The core count of case seed s (drawn from lo..hi by a hash of s). */
int fz_case_cores(const fz_config *c, uint64_t s);
/* The generator's forms of case seed s: the config's, or with mix one of
** six drawn by another hash of s: no loops, static loops or dynamic
** ones, each with dependencies or with sync_info semaphores. */
void fz_case_form(const fz_config *c, uint64_t s, int *loops, int *dynamic,
		  int *sync);
/*
** The generator options as one canonical string, the campaign's
** identity in the database: "cores=A-B size=SZ schedules=K skip=S,..."
** (steps in link order), then " loops" with --loops, " dynamic" with
** --dynamic, " sync=semaphores" with --sync semaphores, or " mix" when
** each case draws its forms, then " compute" with --compute, " by_name"
** with --by-name, then " race" with --race. Caller frees.
*/
char *fz_gen_options(const fz_config *c);
/*
** Parse a string fz_gen_options wrote into *c (keep, null_cases and
** case_timeout_ms are left as they are). Returns 0, or -1 when it is not
** such a string.
*/
int fz_gen_options_parse(const char *s, fz_config *c);
/* "--skip=a,b" of the config's skip mask, or "" (caller frees). */
char *fz_skip_option(const fz_config *c);
/*
** The command line that reproduces case s: generate it into dir, then
** diff it ("lncsim gen --cores N --seed S [--size SZ] -o DIR && lncsim
** diff [--skip=...] [--schedules K] [--race] --seed S DIR/genS").
** Caller frees.
*/
char *fz_repro(const fz_config *c, uint64_t s, const char *dir);

/* Append the encoding of the config (a versioned byte string) to b. */
void fz_config_encode(const fz_config *c, lm_buf *b);
/* Decode what fz_config_encode wrote into *c; err says why not. */
int fz_config_decode(const void *p, size_t n, fz_config *c, lm_error *err);

/* ---- the result record ------------------------------------------------ */

/* Version of the encoding fz_record_encode writes (and of the campaign
** options record): raised whenever a decoder of the previous version
** would refuse what this one writes -- 4: races of kind SLOT, the options
** words mix, dynamic, sync=semaphores, compute, by_name. */
enum { FZ_RECORD_VERSION = 4 };
/* The races a record carries per execution, at most (the first ones the
** detector kept; races_found counts them all). */
enum { FZ_RECORD_RACES = 64 };

typedef enum fz_status {
	FZ_PASS = 0,
	FZ_FAIL,        /* the check failed */
	FZ_ERROR,       /* the case could not run */
	FZ_LOST         /* no result: the case's process died (message why) */
} fz_status;

/* One execution of a case as the run log stores it. */
typedef struct fz_exec {
	char mode[12];           /* "reference" or "linked" */
	int race;                /* checked for races (--race) */
	ls_result r;             /* stats, matmuls, with race the first
				    FZ_RECORD_RACES races and races_found
				    (no outputs) */
} fz_exec;

/* One compared tensor (plain schedule). */
typedef struct fz_tensor {
	char *name;
	int equal;
	int64_t mismatches, first_index;
	double max_abs_diff;
} fz_tensor;

/*
** A case's result: the verdict, what to store of it, and what it was
** made with (the worker's lncsim version and generator options), so a
** record from any machine or build is stored without ambiguity.
** Strings are never NULL after fz_record_init. Free with fz_record_free.
*/
typedef struct fz_record {
	uint64_t seed;
	int cores;
	fz_status status;
	char *kind;              /* "" pass; link, verifier, ..., error, lost */
	char *message;
	char *signature;         /* "" pass; else fz_signature's */
	char *arch;
	char *version;           /* the worker's lncsim version */
	char *gen_options;       /* the worker's fz_gen_options */
	char *kept;              /* directory the case was kept in, or "" */
	int64_t started;         /* unix time the case began */
	double wall;             /* seconds it took */
	int n_exec;
	fz_exec exec[2];
	int n_tensors;
	fz_tensor *tensors;
} fz_record;

void fz_record_init(fz_record *r);
void fz_record_free(fz_record *r);
/* Set a string field (copies v; NULL: ""). */
void fz_record_set(char **field, const char *v);
/* Append the encoding of r to b. */
void fz_record_encode(const fz_record *r, lm_buf *b);
/*
** Decode n bytes into *r (fz_record_init'ed here; free it even on
** failure). Refuses a truncated or malformed record and one of another
** version, with err saying which.
*/
int fz_record_decode(const void *p, size_t n, fz_record *r, lm_error *err);

/* ---- failure signatures ------------------------------------------------ */

/*
** The signature of a failure: "KIND|CLASS|POSITION". CLASS is, for a
** mismatch, the first differing tensor's name with each run of digits
** written '#' (tensor_class), else the message's error class: quoted
** text written '*', numbers '#', at most 160 bytes (error_class).
** POSITION is where the first differing element lies in that tensor of
** count elements: "all" (every element differs), "first", "last",
** "inner"; "-" for anything but a mismatch.
*/
char *fz_signature(const char *kind, const char *message, const char *tensor,
		   int64_t first_index, int64_t mismatches, int64_t count);
/* The class parts on their own (caller frees). */
char *fz_tensor_class(const char *name);
char *fz_error_class(const char *message);

/* ---- a case ------------------------------------------------------------ */

/*
** Run case s of campaign c in this process and fill *r (init'ed here):
** generate in memory, check, and with c->keep write a failing case and
** its REPRO beneath that directory. r->status FZ_ERROR when the case
** could not run. With c->keep, made (when not NULL) is the case's
** directory beneath it, made by fz_case_dir before (so the process that
** runs this one knows what to remove when it kills it); NULL: made here.
** The caller frees r.
*/
void fz_case_run(const fz_config *c, uint64_t s, fz_record *r,
		 const char *made);
/* Make the directory of case s beneath c->keep: "case-<s>", or
** "case-<s>.<k>" when that is taken (*name, caller frees). */
int fz_case_dir(const fz_config *c, uint64_t s, char **name, lm_error *err);
/*
** Remove kept case path (what a record's kept field says), which must be
** an entry "case-<seed>" or "case-<seed>.<k>" directly beneath keep (the
** --keep-failures directory, spelled as the case had it): anything else
** is refused and left alone. A symlink in its place is removed, never
** followed.
*/
int fz_kept_remove(const char *keep, const char *path, lm_error *err);

#endif
