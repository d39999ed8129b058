/*
** fuzz_mpi.h -- a campaign across machines: `mpirun -np K lncsim fuzz`
** or `srun lncsim fuzz` (built with ./configure --with-mpi). Rank 0 is
** the coordinator and runs cases on its own case servers too; every
** other rank relays between rank 0 and its case servers (one, or
** --jobs J of them), and tells rank 0 it lives while a case runs. A rank
** silent for --lost-after seconds while it has a case is taken for
** dead: its cases are lost (handed out again once), and a message it
** sends later puts it back to work.
**
** Messages (MPI_BYTE on MPI_COMM_WORLD): a worker sends READY (its slot
** count), RESULT (slot, a result record), GONE (slot, why: a case server
** died) and BEAT; rank 0 sends WORK (slot, seed), STOP (slot) and QUIT.
*/
#ifndef LNCSIM_FUZZ_MPI_H
#define LNCSIM_FUZZ_MPI_H

#include "common.h"
#include "fuzz.h"
#include "fuzz_pool.h"
#include "fuzz_run.h"

/* MPI_Init (after the pool is forked) with errors returned, not fatal. */
int fz_mpi_init(int *argc, char ***argv, int *rank, int *size,
		lm_error *err);
/* MPI_Finalize; a rank still in it after a few seconds (a dead rank can
** hold its fence) exits with status. */
void fz_mpi_finalize(int status);
/* Rank 0: the campaign's options to every worker rank; c NULL: there is
** no campaign (the workers exit). */
void fz_mpi_send_config(const fz_config *c);
/* A worker rank: the campaign's options. 0, 1 when there is no campaign,
** or LM_EINPUT with err. */
int fz_mpi_recv_config(fz_config *c, lm_error *err);
/*
** Rank 0's transport: its pool's slots are workers 0 .. J0 - 1, the
** slots of rank r (1 .. size - 1) follow, jobs per rank. A rank silent
** for lost_after seconds with a case running loses its cases.
*/
void fz_mpi_transport(fz_transport *t, fz_pool *pool, int size, int jobs,
		      double lost_after);
/* Send QUIT to every rank not let go yet; free. */
void fz_mpi_transport_free(fz_transport *t);
/* A worker rank: run what rank 0 hands out through the pool until it
** lets every slot go or says QUIT, and remove the kept cases (beneath
** keep, the campaign's --keep-failures) rank 0 discards. 0, or -1 after
** an MPI error. */
int fz_mpi_worker(fz_pool *pool, double lost_after, const char *keep);

#endif
