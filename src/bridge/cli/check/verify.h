/*-------------------------------------------------------------------------
 *
 * verify.h
 *	  "cqlbridge verify": every workload query of 004_verify.sql answered
 *	  the same by the relational tables and by the target tables (verify.c).
 *	  The whole-table diff, the next check, belongs in this folder.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/check/verify.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQLBRIDGE_VERIFY_H
#define CQLBRIDGE_VERIFY_H

#include "common/common.h"

/* verify.c: the command (main.c dispatches). */
extern int	cmd_verify(const BridgeOptions *opts);

#endif							/* CQLBRIDGE_VERIFY_H */
