"""Record keys and partition paths as Hudi's key generators build them: keys and paths from column
values (keygen), timestamp-based partitioning (timestamp_keygen) with Java date patterns
(datetime_format) on civil-calendar arithmetic (calendar), and a table's partition scheme
(partition_scheme)."""
