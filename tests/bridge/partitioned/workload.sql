--
-- tests/bridge/partitioned/workload.sql
--	  One query over the partitioned relation of schema.sql, in the block
--	  format of migrations/hotel/workload.sql.
--

-- name: Q1_events_by_device
-- description: events of a device, newest first
-- params: device_id int
-- target: part.events_by_device_id
SELECT e.device_id, e.happened_at, e.kind, e.payload
FROM part_rel.events e
WHERE e.device_id = :'device_id'::int
ORDER BY e.happened_at DESC;
