/*-------------------------------------------------------------------------
 *
 * sync.h
 *	  "cqlbridge sync": the triggers that keep the target tables in step
 *	  with the relational tables (005_sync.sql), written from 003's
 *	  metadata (emit_sync.c) and installed or removed (sync.c).  Change
 *	  capture from logical decoding is capture/ ("cqlbridge stream").
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/sync/sync.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQLBRIDGE_SYNC_H
#define CQLBRIDGE_SYNC_H

#include "common/common.h"

/* sync.c: the command (main.c dispatches). */
extern int	cmd_sync(const BridgeOptions *opts);

/* sync.c: re-install 005 when sync triggers exist (apply calls it). */
extern bool bridge_sync_refresh(PGconn *conn, const BridgeOptions *opts);

/* emit_sync.c: write DIR/005_sync.sql from DIR/003_load.sql (plan calls it). */
extern void emit_sync(const char *dir);

/* emit_sync.c: SQL that removes what 005_sync.sql installed. */
extern char *emit_sync_uninstall_sql(const char *dir);

/* emit_sync.c: the plan's schema (cqlbridge_<keyspace>) of DIR/003_load.sql. */
extern char *emit_sync_plan_schema(const char *dir);

/* sync.c: relations with sync triggers of the plan in opts->dir */
extern int	bridge_sync_trigger_count(PGconn *conn, const BridgeOptions *opts);

#endif							/* CQLBRIDGE_SYNC_H */
