"""The catalog's tables in a Hive Metastore: a Thrift client of our own (`thrift`, `metastore`),
Hive's column and format names (`columns`), and the sync that keeps the metastore current (`sync`)."""
