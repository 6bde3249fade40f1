"""The writer: table creation, base and log files, transactions and commits, the rollback of failed
writes, and the table services that follow a commit.

Three layers, imports pointing down only (`tests/test_import_graph.py` checks it):
- the entry modules: `job` (`plan_write` / `commit_write` / `abort_write`, on the driver; the
  services after the commit), `task` (`write_task`: one task's file groups), `ddl` (`alter_table`);
- `services/`: clean, archive, compaction, and `run_table_services`;
- the core, every other module: options (the services' settings in `service_options`),
  transactions (`txn`, `rollback`), data files, log blocks, commit metadata, markers, heartbeats.

These are the format-level pieces engines build on (the PySpark writer, test fixtures, the demo
and benchmarks); they make no decisions about indexes or file sizing.
"""
