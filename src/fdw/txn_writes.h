/*-------------------------------------------------------------------------
 *
 * txn_writes.h
 *		Writes deferred to COMMIT (txn_writes.c).
 *
 * IDENTIFICATION
 *		src/fdw/txn_writes.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_FDW_TXN_WRITES_H
#define CQL_FDW_TXN_WRITES_H

#include "cql_wire.h"
#include "remote.h"

extern void cqlfdw_defer_write(const CqlRemote *r, const cql_value_ref *values,
							   int nvalues, const uint8_t *routing_key,
							   size_t routing_len, uint16 consistency,
							   uint16 serial_consistency, int64 timestamp,
							   const uint8_t *row_key, size_t row_key_len);

#endif							/* CQL_FDW_TXN_WRITES_H */
