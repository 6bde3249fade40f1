"""A table's layout on storage: meta columns and the schema as of an instant (table_schema),
partition folders and their values (partitions), file groups and file slices (slices), and the
listing a table snapshot keeps (listing)."""
